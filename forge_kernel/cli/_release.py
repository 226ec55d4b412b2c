"""``forge release`` builds a release folder; ``forge keygen``, ``forge signoff`` and ``forge verify``: reviewers'
signatures on it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..spec import echo, printable

RELEASE = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command()
@click.argument("parameters", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--accept-sandbox-change",
    "accept_sandbox_change",
    is_flag=True,
    help="Resume the release's stores although their isolated agents' sandbox differs from the one they "
    "started in; the change is recorded in each run's manifest.",
)
def release(parameters, accept_sandbox_change) -> None:
    """Run the trials a release lacks, execute its report notebook and export its HTML; exit 0 green, 1 red."""
    from ..report import build_release

    built = build_release(parameters, say=echo, accept_sandbox_change=accept_sandbox_change)
    echo(f"release.ipynb: {built.notebook}\nrelease.html:  {built.html}")
    reasons = ", ".join(built.values["red_because"])
    echo(
        f"gate {'GREEN' if built.green else 'RED'}"
        + (f" ({reasons})" if reasons else "")
        + f" · sign it: forge signoff {built.folder} --reviewer NAME --role ROLE --key KEYFILE --decision "
        "approve|reject"
    )
    sys.exit(0 if built.green else 1)


@click.command()
@click.option("--reviewer", required=True, help="The reviewer's name, as it will stand beside every signature.")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The private key file to write (mode 600); the public key goes to OUT.pub.",
)
def keygen(reviewer, out) -> None:
    """Make a reviewer's Ed25519 key pair."""
    from ..report import keygen as make

    public = make(reviewer, out)
    echo(
        f"private key: {out} (keep it to yourself)\npublic key:  {out}.pub ({public.fingerprint}); give it to "
        "whoever verifies releases"
    )


@click.command()
@click.argument("release", type=RELEASE)
@click.option("--reviewer", required=True)
@click.option(
    "--role",
    default="",
    help="The role you sign in, e.g. clinician or engineer (a withdrawal: that of the signature withdrawn).",
)
@click.option("--key", "key_file", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--decision", required=True, type=click.Choice(["approve", "reject", "withdraw"]))
@click.option("--withdraws", type=int, help="With --decision withdraw: the number (#) of your signature to withdraw.")
@click.option("--comment", default="")
def signoff(release, reviewer, role, key_file, decision, withdraws, comment) -> None:
    """Sign a release folder: its notebook, HTML, parameters and every trial of its run stores, after the signatures
    before it."""
    from ..report import SIGNOFF, chain_head, decision_text, sign

    signatures = sign(release, reviewer, role, key_file, decision, comment, withdraws)["signatures"]
    statement = signatures[-1]["statement"]
    echo(
        printable(
            f"{reviewer} ({statement['role']}) signed {decision_text(statement)} at {statement['time']}: "
            f"{release / SIGNOFF}"
        )
    )
    echo(f"chain: {chain_head(signatures)} (keep the head: forge verify --head HEAD fails once it is removed)")


@click.command(name="verify")
@click.argument("release", type=RELEASE)
@click.option(
    "--trusted",
    "trusted",
    type=click.Path(exists=True, path_type=Path),
    help="Reviewers' public keys: a file of key lines or a folder of .pub files. Without it no key is trusted.",
)
@click.option(
    "--head",
    default=None,
    help="The chain's head as forge signoff printed it: fail unless the chain still holds that signature.",
)
def verify_release(release, trusted, head) -> None:
    """Exit 0 only when every signature is valid, by a trusted key, follows the one before it, nothing it covers has
    changed, no rejection stands and every role the release needs is approved; else 1. One line per signature (ok,
    or FAIL and why), then the problems of the release as a whole and the verdict."""
    from ..report import trusted_keys, verify

    outcome = verify(release, trusted_keys(trusted) if trusted else [], head)
    for checked in outcome.signatures:
        if checked.ok:
            echo(printable(f"ok    {checked.line}" + (f": {checked.note}" if checked.note else "")))
        else:
            echo(printable(f"FAIL  {checked.line}: {'; '.join(checked.problems)}"))
    for line in outcome.problems:
        echo(printable(f"FAIL  {line}"))
    echo(f"chain: {outcome.head}")
    missing = f" (no approval yet from: {', '.join(outcome.missing)})" if outcome.missing else ""
    echo(printable(f"{release}: {'verified' if outcome.ok else 'NOT verified'}{missing}"))
    sys.exit(0 if outcome.ok else 1)
