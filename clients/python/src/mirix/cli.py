"""``mirix``: the command line of the MIRIX memory service. Every command takes ``--json`` (the
API's answer as JSON on stdout). The key and address come from ``--api-key``/``--base-url``,
``MIRIX_API_KEY``/``MIRIX_BASE_URL``, or ``~/.config/mirix/config.toml``."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from mirix import config
from mirix.client import Mirix
from mirix.errors import APIError, MirixError

app = typer.Typer(help="MIRIX memory from the command line.", no_args_is_help=True, pretty_exceptions_enable=False)
subjects_app = typer.Typer(help="Subjects: the users and agents memory is kept for.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys (admin scope).", no_args_is_help=True)
jobs_app = typer.Typer(help="Background jobs.", no_args_is_help=True)
app.add_typer(subjects_app, name="subjects")
app.add_typer(keys_app, name="keys")
app.add_typer(jobs_app, name="jobs")

out = Console()
err = Console(stderr=True)
Json = Annotated[bool, typer.Option("--json", help="Print the API's answer as JSON.")]
_state: dict[str, str | None] = {"api_key": None, "base_url": None}


@app.callback()
def _options(
    api_key: Annotated[str | None, typer.Option(help="Default: MIRIX_API_KEY or the config file.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Default: MIRIX_BASE_URL or the config file.")] = None,
) -> None:
    _state.update(api_key=api_key, base_url=base_url)


def _client() -> Mirix:
    settings = config.resolve(_state["api_key"], _state["base_url"], use_file=True)
    return Mirix(api_key=settings.api_key, base_url=settings.base_url)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(_plain(value), indent=2, default=str) + "\n")


def _fail(exc: MirixError, as_json: bool) -> typer.Exit:
    if as_json:
        body: dict[str, Any] = {"message": str(exc)}
        if isinstance(exc, APIError):
            body = {"code": exc.code, "message": exc.message, "details": exc.details, "request_id": exc.request_id}
        sys.stdout.write(json.dumps({"error": body}, default=str) + "\n")
    else:
        err.print(f"[red]error:[/red] {exc}")
        if isinstance(exc, APIError) and exc.details:
            err.print(json.dumps(exc.details, indent=2, default=str))
    return typer.Exit(1)


def _run(as_json: bool, action: Any) -> Any:
    try:
        with _client() as client:
            return action(client)
    except MirixError as exc:
        raise _fail(exc, as_json) from None


def _write_body(raw: str) -> dict[str, Any]:
    """What ``add`` sends for ``raw``: a JSON write body ({"messages"|"text", ...}), a JSON list
    of messages, or else the text itself."""
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"text": raw}
    if isinstance(parsed, list):
        return {"messages": parsed}
    if isinstance(parsed, dict) and ({"messages", "text"} & parsed.keys()):
        return parsed
    return {"text": raw}


# Subjects -----------------------------------------------------------------------------------


@subjects_app.command("list")
def subjects_list(as_json: Json = False) -> None:
    """Every subject of the organization."""
    subjects = _run(as_json, lambda c: list(c.subjects.list()))
    if as_json:
        return _emit_json(subjects)
    table = Table("external id", "kind", "display name", "created")
    for s in subjects:
        table.add_row(s.external_id, s.kind, s.display_name or "", s.created_at.isoformat())
    out.print(table)


@subjects_app.command("create")
def subjects_create(
    external_id: str,
    kind: Annotated[str, typer.Option(help="user or agent")] = "user",
    display_name: str | None = None,
    as_json: Json = False,
) -> None:
    """Create a subject."""
    subject = _run(as_json, lambda c: c.subjects.create(external_id, kind=kind, display_name=display_name))
    _emit_json(subject) if as_json else out.print(f"created {subject.external_id} ({subject.id})")


@subjects_app.command("update")
def subjects_update(
    external_id: str,
    display_name: Annotated[str, typer.Option(help="What questions and graph facts call the subject.")],
    as_json: Json = False,
) -> None:
    """Rename a subject (a job re-indexes its graph when the name it is called by changes)."""
    renamed = _run(as_json, lambda c: c.subjects.update(external_id, display_name=display_name))
    job = renamed.graph_reindex_job_id
    _emit_json(renamed) if as_json else out.print(
        f"renamed {renamed.external_id}" + (f"; graph job {job}" if job else "")
    )


# Memory -------------------------------------------------------------------------------------


@app.command()
def add(
    subject: str,
    content: Annotated[str | None, typer.Argument(help="Text to remember (or use --file).")] = None,
    file: Annotated[str | None, typer.Option("--file", "-f", help="A file to read, or - for stdin.")] = None,
    metadata: Annotated[str | None, typer.Option(help="A JSON object stored on every row.")] = None,
    wait: Annotated[bool, typer.Option(help="Return once the write is indexed.")] = True,
    as_json: Json = False,
) -> None:
    """Remember text, a JSON list of messages, or a JSON write body ({"messages"|"text", ...})."""
    if file is not None:
        raw = sys.stdin.read() if file == "-" else Path(file).read_text()
    elif content is not None:
        raw = content
    else:
        raise typer.BadParameter("give the content, or --file F (- for stdin)")
    body = _write_body(raw)
    if metadata is not None:
        body["metadata"] = json.loads(metadata)
    written = _run(as_json, lambda c: c.memories.add(subject, wait=wait, **body))
    if as_json:
        return _emit_json(written)
    out.print(f"stored {len(written.records)} rows: " + ", ".join(f"{r.type} {r.id}" for r in written.records))


@app.command("import")
def import_(
    subject: str,
    file: Annotated[Path, typer.Argument(help="JSON lines, one write body each.", exists=True, dir_okay=False)],
    as_json: Json = False,
) -> None:
    """Import a JSONL file: each line a write body ({"messages": [...]} or {"text": ...}, with
    "metadata"). Running it again stores nothing twice (each line has its idempotency key)."""
    lines = [line for line in file.read_text().splitlines() if line.strip()]
    digest = hashlib.sha256(file.read_bytes()).hexdigest()[:24]
    results: list[Any] = []

    def run(client: Mirix) -> None:
        with Progress(console=err, transient=as_json) as progress:
            task = progress.add_task(f"importing {file.name}", total=len(lines))
            for n, line in enumerate(lines, 1):
                try:
                    body = json.loads(line)
                except ValueError as exc:
                    raise typer.BadParameter(f"line {n} is not JSON: {exc}") from None
                results.append(
                    client.memories.add(
                        subject, idempotency_key=f"import-{digest}-{n}", **_write_body(json.dumps(body))
                    )
                )
                progress.advance(task)

    _run(as_json, run)
    if as_json:
        return _emit_json({"imported": len(results), "results": results})
    out.print(f"imported {len(results)} writes ({sum(len(r.records) for r in results)} rows) into {subject}")


@app.command()
def search(
    subject: str,
    query: str,
    limit: Annotated[int | None, typer.Option(help="At most this many rows.")] = None,
    as_json: Json = False,
) -> None:
    """Facts and rows relevant to QUERY, each fact with the rows it cites."""
    found = _run(as_json, lambda c: c.search(subject, query, limit=limit))
    if as_json:
        return _emit_json(found)
    facts = Table("fact", "who/what", "current", "cites", title="Facts")
    for f in found.facts:
        roles = ", ".join(f"{r.role}={r.name}" for r in f.roles)
        literals = ", ".join(f"{k}={v}" for k, v in f.literals.items())
        facts.add_row(
            f.predicate,
            "; ".join(x for x in (roles, literals) if x),
            "yes" if f.current else "no",
            "\n".join(f.citations),
        )
    rows = Table("id", "type", "text", "when", title="Rows")
    for r in found.rows:
        when = r.event_time or r.mention_time or r.valid_from
        rows.add_row(r.id, r.type, r.text, when.isoformat() if when else "")
    if found.facts:
        out.print(facts)
    out.print(rows)


@app.command()
def answer(subject: str, query: str, as_json: Json = False) -> None:
    """Answer QUERY from the subject's memory, citing the rows it rests on."""
    answered = _run(as_json, lambda c: c.answer(subject, query))
    if as_json:
        return _emit_json(answered)
    out.print(answered.answer)
    for row_id in answered.cited_row_ids:
        out.print(f"  [dim]cites {row_id}[/dim]")


@app.command()
def export(
    subject: str,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    as_json: Json = False,
) -> None:
    """Everything stored about the subject, as JSON."""
    exported = _run(as_json, lambda c: c.subjects.export(subject))
    text = json.dumps(exported, indent=2, default=str)
    if output is not None:
        output.write_text(text + "\n")
        return _emit_json({"written": str(output)}) if as_json else out.print(f"wrote {output}")
    sys.stdout.write(text + "\n")


# Keys and jobs ------------------------------------------------------------------------------


@keys_app.command("create")
def keys_create(
    name: str,
    scope: Annotated[list[str], typer.Option("--scope", help="Repeat for each scope.")],
    rate_limit: Annotated[int | None, typer.Option(help="Requests per minute.")] = None,
    as_json: Json = False,
) -> None:
    """Issue a key; its secret is shown once."""
    issued = _run(as_json, lambda c: c.api_keys.create(name, scope, rate_limit_per_minute=rate_limit))
    _emit_json(issued) if as_json else out.print(f"{issued.api_key.id}  {issued.secret}")


@keys_app.command("revoke")
def keys_revoke(api_key_id: str, as_json: Json = False) -> None:
    """Revoke a key now."""
    revoked = _run(as_json, lambda c: c.api_keys.revoke(api_key_id))
    _emit_json(revoked) if as_json else out.print(f"revoked {revoked.id} at {revoked.revoked_at}")


@keys_app.command("rotate")
def keys_rotate(
    api_key_id: str,
    overlap_seconds: Annotated[int | None, typer.Option(help="How long the old key keeps working.")] = None,
    as_json: Json = False,
) -> None:
    """Replace a key by a new one (the old one works for the overlap)."""
    issued = _run(as_json, lambda c: c.api_keys.rotate(api_key_id, overlap_seconds=overlap_seconds))
    _emit_json(issued) if as_json else out.print(f"{issued.api_key.id}  {issued.secret}")


@jobs_app.command("watch")
def jobs_watch(
    job_id: str,
    interval: Annotated[float, typer.Option(help="Seconds between polls.")] = 1.0,
    as_json: Json = False,
) -> None:
    """Follow a job until it ends; exits 1 if it failed."""

    def watch(client: Mirix) -> Any:
        seen = None
        while True:
            job = client.jobs.get(job_id)
            if job.status != seen and not as_json:
                out.print(f"{time.strftime('%H:%M:%S')}  {job.kind}  {job.status}")
                seen = job.status
            if job.done:
                return job
            time.sleep(interval)

    job = _run(as_json, watch)
    if as_json:
        _emit_json(job)
    if job.status == "failed":
        if not as_json:
            err.print(f"[red]failed:[/red] {job.error}")
        raise typer.Exit(1)


@app.command()
def mcp(
    http: Annotated[bool, typer.Option("--http", help="Streamable HTTP instead of stdio.")] = False,
    host: str = "127.0.0.1",
    port: int = 8765,
    as_json: Json = False,
) -> None:
    """Serve the MCP tools (stdio for desktop hosts, --http for streamable HTTP)."""
    from mirix.mcp_server import serve

    try:
        serve(http=http, host=host, port=port)
    except MirixError as exc:
        raise _fail(exc, as_json) from None


def main() -> None:
    app()
