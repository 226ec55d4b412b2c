"""One family of user errors: each names file, field and message, and the CLI prints any of them as one line."""

import pytest

from forge_kernel.cli._forge import user_errors
from forge_kernel.spec import errors
from forge_kernel.spec.errors import ForgeError

FAMILY = [cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, ForgeError)]


def test_the_family_has_a_member_per_kind_of_input():
    assert {cls.__name__ for cls in FAMILY} >= {
        "ForgeError",
        "SpecError",
        "StoreError",
        "PolicyError",
        "AgentError",
        "UsageError",
        "CatalogError",
    }


@pytest.mark.parametrize("cls", FAMILY, ids=lambda c: c.__name__)
def test_every_forge_error_is_one_line_and_exit_2(cls, capsys):
    with pytest.raises(SystemExit) as stop, user_errors():
        raise cls("runs/a/run.sqlite", "meta.schema_version", "is 9")
    assert stop.value.code == 2
    assert capsys.readouterr().err == "runs/a/run.sqlite: meta.schema_version: is 9\n"


def test_an_error_keeps_its_parts():
    err = errors.StoreError("runs/a", "(run)", "no run store")
    assert (err.file, err.field, err.message) == ("runs/a", "(run)", "no run store")
    assert isinstance(err, ForgeError) and not isinstance(err, errors.SpecError)
