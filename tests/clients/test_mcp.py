"""The MCP server, launched as ``mirix mcp`` (stdio) and driven by the ``mcp`` client library,
against the real stack."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mirix import Mirix
from mirix.mcp_server import TOOLS

from tests.clients.conftest import Stack, unique
from tests.processes import stop_process_group, wait_for
from tests.reliability.support import free_port

pytestmark = pytest.mark.slow

MIRIX = str(Path(sys.executable).with_name("mirix"))


def _server(stack: Stack, key: str | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=MIRIX, args=["mcp"], env=stack.env(key))


async def _call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def test_the_tools_cover_a_memorys_life(stack: Stack) -> None:
    subject = stack.owner.subject(unique("mcp")).external_id
    with Mirix(api_key=stack.owner.key, base_url=stack.url) as sdk:
        sdk.consent.update(subject, {"learn_skills": True})

    async def run() -> dict[str, Any]:
        async with Client(_server(stack)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            added = await _call(
                client,
                "add_memory",
                subject=subject,
                messages=[{"role": "user", "content": "I adopted a cat named Miso last week."}],
            )
            found = await _call(client, "search_memory", subject=subject, query="What is the name of my cat?")
            answered = await _call(client, "answer", subject=subject, query="What is my cat's name?")
            listed = await _call(client, "list_memories", subject=subject, type="episodic", limit=10)
            core = await _call(client, "get_core_memory", subject=subject)
            recorded = await _call(
                client,
                "record_task_session",
                subject=subject,
                task="Book a table for two",
                steps=[{"kind": "action", "content": "Called the restaurant", "tool": "phone"}],
                final_output="Booked for 8pm",
                outcome="success",
            )
            skills = await _call(client, "search_skills", subject=subject, query="book a table")
            return {
                "tools": tools,
                "added": added,
                "found": found,
                "listed": listed,
                "core": core,
                "recorded": recorded,
                "skills": skills,
                "answered": answered,
            }

    out = asyncio.run(run())
    assert set(out["tools"]) == set(TOOLS)
    # Each tool's input schema is its SDK model's (the subject added to an SDK request model).
    schema = out["tools"]["add_memory"].input_schema
    assert set(schema["properties"]) == set(TOOLS["add_memory"].model_fields) >= {"subject", "messages", "metadata"}
    assert schema["properties"]["messages"]["anyOf"][0]["items"]["$ref"].endswith("/Message")
    written = {r["id"] for r in out["added"]["records"]}
    assert any("Miso" in row["text"] and row["id"] in written for row in out["found"]["rows"])
    assert all(set(f["citations"]) for f in out["found"]["facts"])
    assert "Miso" in out["answered"]["answer"] and set(out["answered"]["cited_row_ids"]) <= written
    assert out["answered"]["cited_row_ids"]
    assert {r["id"] for r in out["listed"]["results"]} <= written and out["listed"]["results"]
    assert isinstance(out["core"]["blocks"], list)
    assert out["recorded"]["id"] and out["recorded"]["status"]
    assert isinstance(out["skills"]["results"], list) and out["skills"]["retrieval_id"]


def test_another_organizations_key_and_a_bad_key_are_tool_errors(stack: Stack) -> None:
    subject = stack.owner.subject(unique("mcp-private")).external_id

    async def run(key: str) -> tuple[bool, str]:
        async with Client(_server(stack, key)) as client:
            result = await client.call_tool("search_memory", {"subject": subject, "query": "anything"})
            return result.is_error, json.dumps([c.model_dump() for c in result.content])

    intruder_error, intruder_text = asyncio.run(run(stack.intruder.key))
    assert intruder_error and "not_found" in intruder_text
    bad_error, bad_text = asyncio.run(run("mx_live_notakey"))
    assert bad_error and "authentication_failed" in bad_text


def test_the_streamable_http_server_serves_the_same_tools(stack: Stack) -> None:
    subject = stack.owner.subject(unique("mcp-http")).external_id
    port = free_port()
    process = subprocess.Popen(
        [MIRIX, "mcp", "--http", "--port", str(port)],
        env=stack.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    async def run() -> tuple[set[str], dict[str, Any]]:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            added = await _call(client, "add_memory", subject=subject, text="The spare key is under the blue pot.")
            return names, added

    try:
        wait_for(lambda: _listening(port), timeout=60)
        names, added = asyncio.run(run())
    finally:
        stop_process_group(process)
    assert names == set(TOOLS) and added["records"]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_delete_memory_removes_the_row(stack: Stack) -> None:
    subject = unique("mcp-delete")

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(_server(stack)) as client:
            # A first write creates its subject.
            added = await _call(client, "add_memory", subject=subject, text="My gym locker is number 88.")
            episode = next(r for r in added["records"] if r["type"] == "episodic")
            await _call(client, "delete_memory", subject=subject, type="episodic", id=episode["id"])
            return added, await _call(client, "list_memories", subject=subject, type="episodic")

    added, listed = asyncio.run(run())
    assert added["records"] and listed["results"] == []
