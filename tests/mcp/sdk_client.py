"""Drive `tfc mcp` with the official MCP Python SDK (tests/mcp_python.rs runs this).

usage: sdk_client.py TFC_BINARY PROJECT_ROOT

Connects over stdio, lists the tools, calls every one of them, validates each result's
structuredContent against the tool's outputSchema, runs a flow with a command backend to
completion and reads it back with tfc_show. Exits 0 when all of that holds, else 1 with
the reason on stderr.
"""

import asyncio
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

EXPECTED = [
    "tfc_check", "tfc_run", "tfc_status", "tfc_wait", "tfc_cancel", "tfc_resume",
    "tfc_runs", "tfc_show", "tfc_graph", "tfc_plan", "tfc_flows", "tfc_save", "tfc_eval",
    "tfc_test", "tfc_fork",
]


def field(obj, *names):
    """An attribute under its SDK 2.x (snake_case) or 1.x (camelCase) name."""
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(names[0])


def fail(message):
    print(f"sdk client: {message}", file=sys.stderr)
    sys.exit(1)


async def main(tfc, root):
    params = StdioServerParameters(command=tfc, args=["mcp", "--root", root], cwd=root)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            version = field(init, "protocol_version", "protocolVersion")
            if version not in ("2025-06-18", "2025-03-26", "2024-11-05"):
                fail(f"unexpected protocol version {version}")
            listed = await session.list_tools()
            tools = {t.name: t for t in listed.tools}
            if sorted(tools) != sorted(EXPECTED):
                fail(f"tools listed: {sorted(tools)}")
            schemas = {n: field(t, "output_schema", "outputSchema") for n, t in tools.items()}
            validated = set()

            async def call(name, arguments, expect_error=False, progress=None):
                result = await session.call_tool(name, arguments, progress_callback=progress)
                is_error = field(result, "is_error", "isError")
                text = result.content[0].text if result.content else ""
                if is_error != expect_error:
                    fail(f"{name}({arguments}): isError={is_error}: {text}")
                structured = field(result, "structured_content", "structuredContent")
                if not expect_error:
                    if structured is None:
                        fail(f"{name}: no structuredContent")
                    try:
                        jsonschema.Draft202012Validator(schemas[name]).validate(structured)
                    except jsonschema.ValidationError as e:
                        fail(f"{name}: structuredContent does not match outputSchema: {e.message}")
                    validated.add(name)
                return structured, text

            checked, _ = await call("tfc_check", {"path": "flow.json"})
            if not checked["ok"]:
                fail(f"tfc_check: {checked}")
            _, text = await call("tfc_check", {"path": "../elsewhere.json"}, expect_error=True)
            if "outside the root" not in text:
                fail(f"a path outside the root was not refused: {text}")
            graph, _ = await call("tfc_graph", {"path": "flow.json"})
            if not graph["text"].startswith("flowchart"):
                fail(f"tfc_graph: {graph}")
            ev, _ = await call("tfc_eval", {"mode": "when", "text": "{args.n} > 2", "ctx": {"args": {"n": 3}}})
            if ev["value"] is not True:
                fail(f"tfc_eval: {ev}")
            plan, _ = await call("tfc_plan", {"path": "flow.json"})
            if plan["total"]["calls"]["min"] is None or not plan["phases"]:
                fail(f"tfc_plan: {plan}")
            tested, _ = await call("tfc_test", {"path": "flow.json", "tests": [
                {"name": "inline", "answers": {"*": "x"}, "expect": {"status": "completed", "output": "x"}}]})
            if not tested["ok"] or tested["passed"] != 1:
                fail(f"tfc_test: {tested}")
            with open(f"{root}/flow.json") as f:
                import json
                doc = json.load(f)
            await call("tfc_save", {"name": "py-flow", "flow": doc})
            flows, _ = await call("tfc_flows", {})
            if [f["name"] for f in flows["flows"]] != ["py-flow"]:
                fail(f"tfc_flows: {flows}")

            started, _ = await call("tfc_run", {"name": "py-flow", "backend": "echo"})
            run_id = started["runId"]
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total, message))

            done, _ = await call("tfc_wait", {"runId": run_id, "timeoutMs": 60000}, progress=on_progress)
            if done["status"] != "completed" or done["finalOutput"] != "second first":
                fail(f"tfc_wait: {done}")
            if not seen or seen[-1][0] != seen[-1][1]:
                fail(f"progress notifications: {seen}")
            status, _ = await call("tfc_status", {"runId": run_id})
            if status["phases"]["done"] != 2:
                fail(f"tfc_status: {status}")
            runs, _ = await call("tfc_runs", {"limit": 5})
            if runs["runs"][0]["runId"] != run_id:
                fail(f"tfc_runs: {runs}")
            shown, _ = await call("tfc_show", {"runId": run_id})
            if shown["status"] != "completed" or shown["phases"]["two"]["output"] != "second first":
                fail(f"tfc_show: {shown}")
            phase, _ = await call("tfc_show", {"runId": run_id, "phase": "one"})
            if [p["prompt"] for p in phase["prompts"]] != ["first"]:
                fail(f"tfc_show phase: {phase}")

            slow, _ = await call("tfc_run", {"path": "flow.json", "backend": "slow"})
            cancelled, _ = await call("tfc_cancel", {"runId": slow["runId"]})
            if cancelled["status"] != "paused":
                fail(f"tfc_cancel: {cancelled}")
            resumed, _ = await call("tfc_resume", {"runId": slow["runId"], "wait": True, "timeoutMs": 60000})
            if resumed["status"] != "completed" or resumed["parentRunId"] != slow["runId"]:
                fail(f"tfc_resume: {resumed}")

            planned, _ = await call("tfc_fork", {"runId": run_id, "set": {"one": "changed"}, "plan": True})
            if [(p["phase"], p["action"]) for p in planned["phases"]] != [("one", "set"), ("two", "run")]:
                fail(f"tfc_fork plan: {planned}")
            forked, _ = await call("tfc_fork", {"runId": run_id, "set": {"one": "changed"}, "wait": True, "timeoutMs": 60000})
            if forked["status"] != "completed" or forked["finalOutput"] != "second changed":
                fail(f"tfc_fork: {forked}")

            missing = sorted(set(EXPECTED) - validated)
            if missing:
                fail(f"not validated: {missing}")
            print(f"sdk client: {len(validated)} tools called, every result matched its outputSchema")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: sdk_client.py TFC_BINARY PROJECT_ROOT")
    asyncio.run(main(sys.argv[1], sys.argv[2]))
