"""The MCP server: MIRIX memory as tools for an MCP host (Claude Desktop, Cursor, an agent).

``mirix mcp`` serves stdio; ``mirix mcp --http`` serves streamable HTTP. The key and address come
from ``MIRIX_API_KEY`` / ``MIRIX_BASE_URL`` (or the CLI's config file). Each tool's input schema is
the JSON schema of an SDK request model (with the subject added), and its input is validated by
that model before the call."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from mirix import config
from mirix import models as m
from mirix.client import AsyncMirix
from mirix.errors import APIError, MirixError

SUBJECT = Field(description="The external id of the user or agent whose memory this is.")
INSTRUCTIONS = (
    "Long-term memory of users and agents. Before answering a question about a user, call "
    "search_memory or answer; after learning something worth keeping, call add_memory. Every "
    "fact and answer cites the ids of the stored rows it rests on."
)


class AddMemory(m.MemoryWrite):
    subject: str = SUBJECT


class SearchMemory(m.Request):
    subject: str = SUBJECT
    query: str = Field(description="What to look for, in plain words.")
    limit: int | None = Field(default=None, description="At most this many rows.")
    filters: m.Filters | None = Field(default=None, description="A metadata filter (and/or/not over field ops).")
    memory_types: list[m.MemoryType] | None = None


class AnswerQuestion(m.AnswerRequest):
    subject: str = SUBJECT


class ListMemories(m.Request):
    subject: str = SUBJECT
    type: m.MemoryType | None = Field(default=None, description="One store, or all when omitted.")
    filters: m.Filters | None = None
    limit: int = Field(default=50, ge=1, le=500, description="At most this many rows.")


class DeleteMemory(m.Request):
    subject: str = SUBJECT
    type: m.MemoryType = Field(description="The row's store (the `type` of the row).")
    id: str = Field(description="The row's id.")


class GetCoreMemory(m.Request):
    subject: str = SUBJECT


class RecordTaskSession(m.TaskSession):
    subject: str = SUBJECT


class SearchSkills(m.SkillSearch):
    subject: str = SUBJECT


def _json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


class Tools:
    """The tool implementations, on one AsyncMirix client."""

    def __init__(self, client: AsyncMirix) -> None:
        self.client = client

    async def add_memory(self, args: AddMemory) -> dict[str, Any]:
        """Remember a conversation (messages) or a passage (text) about the subject."""
        written = await self.client.memories.add(
            args.subject,
            messages=args.messages,
            text=args.text,
            metadata=args.metadata,
            session_id=args.session_id,
            timestamp=args.timestamp,
            wait=True,
        )
        return _json(written)

    async def search_memory(self, args: SearchMemory) -> dict[str, Any]:
        """Facts (each citing the rows it rests on) and rows relevant to the query."""
        found = await self.client.search(
            args.subject, args.query, limit=args.limit, filters=args.filters, memory_types=args.memory_types
        )
        return {
            "facts": [
                {
                    "predicate": f.predicate,
                    "roles": [r.model_dump() for r in f.roles],
                    "literals": f.literals,
                    "current": f.current,
                    "citations": f.citations,
                }
                for f in found.facts
            ],
            "rows": [
                {"id": r.id, "type": r.type, "text": r.text, "current": r.current, "event_time": _json(r.event_time)}
                for r in found.rows
            ],
        }

    async def answer(self, args: AnswerQuestion) -> dict[str, Any]:
        """An answer from the subject's memory, with the ids of the rows it cites."""
        answered = await self.client.answer(args.subject, args.query, mode=args.mode, token_budget=args.token_budget)
        return {"answer": answered.answer, "cited_row_ids": answered.cited_row_ids}

    async def list_memories(self, args: ListMemories) -> dict[str, Any]:
        """The subject's stored rows, newest first (of one store, or all)."""
        rows: list[Any] = []
        async for row in self.client.memories.list(
            args.subject, type=args.type, filters=args.filters, page_size=min(args.limit, 200)
        ):
            rows.append(_json(row))
            if len(rows) >= args.limit:
                break
        return {"results": rows}

    async def delete_memory(self, args: DeleteMemory) -> dict[str, Any]:
        """Remove one stored row from every store (its facts' citations included)."""
        receipt = await self.client.memories.delete(args.subject, args.type, args.id)
        return {"deleted": args.id, "receipt": receipt}

    async def get_core_memory(self, args: GetCoreMemory) -> dict[str, Any]:
        """The subject's core memory blocks (persona, preferences)."""
        return {"blocks": [_json(block) async for block in self.client.memories.core(args.subject)]}

    async def record_task_session(self, args: RecordTaskSession) -> dict[str, Any]:
        """Record how a task was done (steps and outcome); verified sessions become skills."""
        recorded = await self.client.skills.record_session(
            args.subject,
            task=args.task,
            domain=args.domain,
            steps=args.steps,
            final_output=args.final_output,
            outcome=args.outcome,
        )
        return _json(recorded)

    async def search_skills(self, args: SearchSkills) -> dict[str, Any]:
        """Verified skills (how similar tasks were done before) for a task."""
        return _json(await self.client.skills.search(args.subject, args.query, domain=args.domain, limit=args.limit))


TOOLS: dict[str, type[m.Request]] = {
    "add_memory": AddMemory,
    "search_memory": SearchMemory,
    "answer": AnswerQuestion,
    "list_memories": ListMemories,
    "delete_memory": DeleteMemory,
    "get_core_memory": GetCoreMemory,
    "record_task_session": RecordTaskSession,
    "search_skills": SearchSkills,
}


def _from_model(model: type[BaseModel], run: Callable[[Any], Awaitable[dict[str, Any]]]) -> Callable[..., Any]:
    """A tool function whose parameters are the model's fields (so the tool's input schema is
    the model's), validating its arguments with the model before ``run``."""

    async def tool(**arguments: Any) -> dict[str, Any]:
        try:
            return await run(model.model_validate({k: v for k, v in arguments.items() if v is not None}))
        except APIError as exc:  # the host's model sees what went wrong and how to fix it
            raise ToolError(
                json.dumps({"error": {"code": exc.code, "message": exc.message, "details": exc.details}})
            ) from exc
        except MirixError as exc:
            raise ToolError(str(exc)) from exc

    parameters = []
    for name, info in model.model_fields.items():
        annotation = Annotated[info.annotation, Field(description=info.description)]  # type: ignore[name-defined]
        default = inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        parameters.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
        )
    tool.__signature__ = inspect.Signature(parameters, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": dict[str, Any]}
    tool.__doc__ = run.__doc__
    return tool


def build_server(client: AsyncMirix | None = None, **server_options: Any) -> MCPServer:
    if client is None:
        settings = config.resolve(use_file=True)
        client = AsyncMirix(api_key=settings.api_key, base_url=settings.base_url)
    tools = Tools(client)
    server = MCPServer("mirix", instructions=INSTRUCTIONS, **server_options)
    for name, model in TOOLS.items():
        run = getattr(tools, name)
        server.add_tool(_from_model(model, run), name=name, description=inspect.getdoc(run))
    return server


def serve(*, http: bool = False, host: str = "127.0.0.1", port: int = 8765) -> None:
    server = build_server()
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")
