"""The scenario's agent tools served to a live agent over MCP (streamable HTTP) on 127.0.0.1, so a
bot's tool calls act on the conversation's agent-side state like any agent's.

One server per run (or per coordinator), one URL per conversation: ``{base_url}/mcp/{conversation_id}``
(what the call's ``start`` message carries as ``tool_server_url``). A conversation is registered
with exactly its scenario's agent tools (the harness's own, ``end_conversation``, is not served: a
bot ends a call by hanging up) and a callback through which every call goes, so the coordinator
records it in ``actions`` and syncs after writes. The MCP session a bot opens on a conversation's
URL belongs to that conversation: used on another conversation's URL it is refused with one line
(403), as is a URL of a conversation that ended or never was (404).

Built on the MCP Python SDK's low-level server and its streamable-HTTP session manager, served by
uvicorn on the running event loop (optional extra ``tauray[live]``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.voice.live.errors import ToolServerError
from tauray.scenarios.model import ToolSpec
from tauray.scenarios.state import DualState, ToolOutcome

__all__ = ["ToolCallback", "ToolReply", "ToolServer", "served_tools", "state_callback"]

_PATH = re.compile(r"^/mcp/([^/]+)/?$")
_SESSION_HEADER = "mcp-session-id"


class ToolReply(BaseModel):
    """What a tool call returns to the bot."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The result as the model sees it (JSON or text; 'Error: ...' on failure).")
    error: bool = Field(default=False, description="True when the call failed (MCP's isError).")


ToolCallback = Callable[[str, dict[str, Any]], Awaitable[ToolReply] | ToolReply]
"""``(tool name, arguments) -> ToolReply``: how a conversation's tool calls reach its state."""


def served_tools(tools: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
    """The tools a live agent is served: the scenario's agent tools but the harness's own."""
    return tuple(t for t in tools if t.kind != "harness" and t.side == "agent")


def state_callback(state: DualState, outcomes: list[ToolOutcome] | None = None) -> ToolCallback:
    """A callback running each call on the agent side of ``state`` (sync after a write), appending
    the outcome to ``outcomes``: what the coordinator's callback does, less the recording."""

    def call(name: str, arguments: dict[str, Any]) -> ToolReply:
        outcome, _ = state.execute("agent", name, dict(arguments))
        if outcomes is not None:
            outcomes.append(outcome)
        return ToolReply(text=outcome.result, error=outcome.error)

    return call


class _Conversation:
    def __init__(self, tools: tuple[ToolSpec, ...], call: ToolCallback):
        self.tools = {t.name: t for t in tools}
        self.call = call
        self.listed = [types.Tool(name=t.name, description=t.description, input_schema=t.parameters) for t in tools]


def _json_error(status: int, message: str) -> tuple[int, bytes]:
    return status, json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()


class ToolServer:
    """The run's MCP tool server on 127.0.0.1 (``async with ToolServer() as server``)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, call_timeout_s: float = 30.0,
                 session_idle_timeout_s: float = 900.0):
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise ToolServerError(f"tool server: serves on loopback only (got host {host!r})")
        self.host, self.port, self.call_timeout_s = host, port, call_timeout_s
        self._conversations: dict[str, _Conversation] = {}
        self._owners: dict[str, str] = {}  # MCP session id -> conversation id
        self._mcp = Server("tauray-tools", on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        self._manager = StreamableHTTPSessionManager(
            app=self._mcp, session_idle_timeout=session_idle_timeout_s,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]))
        self._uvicorn: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle
    async def start(self, timeout_s: float = 10.0) -> None:
        config = uvicorn.Config(self._asgi, host=self.host, port=self.port, lifespan="off", interface="asgi3", log_level="warning",
                                access_log=False)
        self._uvicorn = uvicorn.Server(config)
        self._task = asyncio.create_task(self._serve())
        deadline = asyncio.get_running_loop().time() + timeout_s
        while not self._uvicorn.started:
            if self._task.done():
                self._task.result()
                raise ToolServerError("tool server: uvicorn stopped before it listened")
            if asyncio.get_running_loop().time() > deadline:
                await self.stop()
                raise ToolServerError(f"tool server: not listening within {timeout_s:g} s")
            await asyncio.sleep(0.01)
        self.port = self._uvicorn.servers[0].sockets[0].getsockname()[1]

    async def _serve(self) -> None:
        assert self._uvicorn is not None
        async with self._manager.run():
            await self._uvicorn.serve()

    async def stop(self, timeout_s: float = 5.0) -> None:
        if self._uvicorn is not None and self._task is not None:
            self._uvicorn.should_exit = True
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout_s)
            except TimeoutError:
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
        self._uvicorn = self._task = None

    async def __aenter__(self) -> ToolServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def serving(self) -> bool:
        """Whether it is listening (started, and its server has not stopped)."""
        return self._task is not None and not self._task.done()

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    # ------------------------------------------------------------------ conversations
    def register(self, conversation_id: str, tools: Sequence[ToolSpec], call: ToolCallback) -> str:
        """Serve ``tools`` (a scenario's agent tools) for one conversation; its URL."""
        if not conversation_id or "/" in conversation_id:
            raise ToolServerError(f"tool server: a conversation id must be non-empty without '/' (got {conversation_id!r})")
        if conversation_id in self._conversations:
            raise ToolServerError(f"tool server: conversation {conversation_id!r} is already registered")
        self._conversations[conversation_id] = _Conversation(served_tools(tools), call)
        return f"{self.base_url}/mcp/{quote(conversation_id, safe='')}"

    def unregister(self, conversation_id: str) -> None:
        """The conversation ended: its URL and sessions answer 404 from now on."""
        self._conversations.pop(conversation_id, None)
        for session in [s for s, c in self._owners.items() if c == conversation_id]:
            del self._owners[session]

    def sessions_of(self, conversation_id: str) -> list[str]:
        """The MCP session ids opened on a conversation's URL."""
        return [s for s, c in self._owners.items() if c == conversation_id]

    # ------------------------------------------------------------------ HTTP
    async def _asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        match = _PATH.match(scope.get("path", ""))
        if match is None:
            return await _reply(send, *_json_error(404, "tool server: the path is not /mcp/<conversation id>"))
        conversation = unquote(match.group(1))
        if conversation not in self._conversations:
            return await _reply(send, *_json_error(
                404, f"tool server: no conversation {conversation!r} here (ended, or never registered)"))
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        session = headers.get(_SESSION_HEADER)
        if session is not None:
            owner = self._owners.get(session)
            if owner is not None and owner != conversation:
                return await _reply(send, *_json_error(
                    403, f"tool server: this session belongs to another conversation; /mcp/{conversation} serves "
                    f"conversation {conversation!r} only"))
            # an unknown session (expired, or never opened) is the SDK's to answer: 404
            return await self._manager.handle_request(scope, receive, send)

        async def noting_the_session(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.decode("latin-1").lower() == _SESSION_HEADER:
                        self._owners[value.decode("latin-1")] = conversation
            await send(message)

        await self._manager.handle_request(scope, receive, noting_the_session)

    # ------------------------------------------------------------------ MCP
    def _conversation_of(self, ctx: Any) -> tuple[str, _Conversation]:
        request = getattr(ctx, "request", None)
        match = _PATH.match(request.url.path) if request is not None else None
        conversation = unquote(match.group(1)) if match else ""
        found = self._conversations.get(conversation)
        if found is None:
            raise ToolServerError(f"tool server: no conversation {conversation!r} here (ended, or never registered)")
        return conversation, found

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        _, conversation = self._conversation_of(ctx)
        return types.ListToolsResult(tools=list(conversation.listed))

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            conversation_id, conversation = self._conversation_of(ctx)
        except ToolServerError as exc:  # the call ended while this request was on its way: the bot's answer
            return types.CallToolResult(content=[types.TextContent(text=f"Error: {exc}")], is_error=True)
        if params.name not in conversation.tools:
            reply = ToolReply(text=f"Error: conversation {conversation_id!r} has no tool {params.name!r}", error=True)
        else:
            try:
                outcome = conversation.call(params.name, dict(params.arguments or {}))
                if inspect.isawaitable(outcome):
                    outcome = await asyncio.wait_for(outcome, self.call_timeout_s)
                reply = outcome
            except TimeoutError:
                reply = ToolReply(text=f"Error: the tool {params.name!r} took longer than {self.call_timeout_s:g} s",
                                  error=True)
        return types.CallToolResult(content=[types.TextContent(text=reply.text)], is_error=reply.error)


async def _reply(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
