"""`tfc lsp` driven by pytest-lsp, a real LSP client, over stdio (run by tests/lsp_client.rs).

The server binary is $TFC_BIN; a scratch project is $TFC_LSP_PROJECT.
"""

import os
import pathlib
import time

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

TFC = os.environ["TFC_BIN"]
ROOT = pathlib.Path(os.environ["TFC_LSP_PROJECT"])

FLOW = """{
  "args": {"repo": {"type": "string"}},
  "phases": [
    {"id": "scan", "output": "json", "task": "Scan {args.repo} — naïve 😀",
     "expect": {"type": "object", "properties": {"severity": {"enum": ["low", "high"]}}}},
    {"id": "fix", "dependsOn": ["scan"], "final": true,
     "task": "Fix {steps.scan.json.severity} 😀 {steps.scna.output}"}
  ]
}"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[TFC, "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(t.InitializeParams(capabilities=t.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


def position(text: str, needle: str, delta: int = 0) -> t.Position:
    """The UTF-16 position of `needle` (plus `delta` chars) in `text`."""
    at = text.index(needle) + delta
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    units = len(text[start:at].encode("utf-16-le")) // 2
    return t.Position(line=line, character=units)


async def open_flow(client: LanguageClient, name: str, text: str) -> str:
    path = ROOT / name
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)
        )
    )
    await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    while uri not in client.diagnostics:
        await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


async def test_diagnostics_after_non_ascii_text(client: LanguageClient):
    uri = await open_flow(client, "a.flow.json", FLOW)
    diags = client.diagnostics[uri]
    assert [d.code for d in diags] == ["E0202"]
    d = diags[0]
    assert d.source == "tfc"
    assert d.range.start == position(FLOW, "{steps.scna")
    assert d.range.end == position(FLOW, "{steps.scna.output}", len("{steps.scna.output}"))
    assert "did you mean {steps.scan.output}?" in d.message


async def test_hover_definition_references_rename(client: LanguageClient):
    uri = await open_flow(client, "b.flow.json", FLOW)
    doc = t.TextDocumentIdentifier(uri=uri)
    hover = await client.text_document_hover_async(
        t.HoverParams(text_document=doc, position=position(FLOW, "{steps.scan.json", 3))
    )
    assert "`enum low|high" in hover.contents.value
    found = await client.text_document_definition_async(
        t.DefinitionParams(text_document=doc, position=position(FLOW, "{steps.scan.json", 8))
    )
    loc = found[0] if isinstance(found, list) else found
    assert loc.range.start == position(FLOW, '"scan"', 1)
    refs = await client.text_document_references_async(
        t.ReferenceParams(
            text_document=doc,
            position=position(FLOW, '"scan"', 1),
            context=t.ReferenceContext(include_declaration=True),
        )
    )
    assert len(refs) == 3
    edit = await client.text_document_rename_async(
        t.RenameParams(text_document=doc, position=position(FLOW, '"scan"', 1), new_name="survey")
    )
    assert len(edit.changes[uri]) == 3
    assert all(e.new_text == "survey" for e in edit.changes[uri])
    with pytest.raises(Exception):
        await client.text_document_rename_async(
            t.RenameParams(text_document=doc, position=position(FLOW, '"scan"', 1), new_name="bad name")
        )


async def test_completion_and_quick_fix(client: LanguageClient):
    text = FLOW.replace("{steps.scna.output}", "{steps.}")
    uri = await open_flow(client, "c.flow.json", text)
    doc = t.TextDocumentIdentifier(uri=uri)
    items = await client.text_document_completion_async(
        t.CompletionParams(text_document=doc, position=position(text, "{steps.}", 7))
    )
    items = items.items if hasattr(items, "items") else items
    assert [i.label for i in items] == ["scan"]
    uri = await open_flow(client, "d.flow.json", FLOW)
    actions = await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            range=t.Range(start=position(FLOW, "{steps.scna", 2), end=position(FLOW, "{steps.scna", 2)),
            context=t.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions]
    assert "Change to {steps.scan.output}" in titles


async def test_completion_keeps_the_word_after_the_cursor(client: LanguageClient):
    text = FLOW.replace("{steps.scna.output}", "{steps.scan.ou Risk").replace("ou Risk", "ouRisk")
    uri = await open_flow(client, "g.flow.json", text)
    items = await client.text_document_completion_async(
        t.CompletionParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            position=position(text, "{steps.scan.ouRisk", len("{steps.scan.ou")),
        )
    )
    items = items.items if hasattr(items, "items") else items
    out = next(i for i in items if i.label == "output")
    assert out.text_edit.range.start == position(text, "{steps.scan.ouRisk", len("{steps.scan."))
    assert out.text_edit.range.end == position(text, "{steps.scan.ouRisk", len("{steps.scan.ou"))
    assert out.text_edit.new_text == "output}"


async def test_renaming_a_saved_flows_argument_reaches_its_callers(client: LanguageClient):
    (ROOT / ".tfc/flows").mkdir(parents=True, exist_ok=True)
    saved = '{"args": {"repo": {"type": "string"}}, "phases": [{"id": "x", "task": "{args.repo}"}]}'
    caller = '{"phases": [{"id": "c", "type": "flow", "use": "audit", "with": {"repo": "r"}, "final": true}]}'
    (ROOT / "disk.flow.json").write_text(caller)
    saved_uri = await open_flow(client, ".tfc/flows/audit.json", saved)
    caller_uri = await open_flow(client, "caller.flow.json", caller)
    edit = await client.text_document_rename_async(
        t.RenameParams(
            text_document=t.TextDocumentIdentifier(uri=saved_uri),
            position=position(saved, '"repo"', 1),
            new_name="repository",
        )
    )
    assert len(edit.changes[saved_uri]) == 2
    [key] = edit.changes[caller_uri]
    assert key.new_text == "repository"
    assert key.range.start == position(caller, '"repo"', 1)
    message = client.messages[-1]
    assert message.type == t.MessageType.Warning
    assert "1 file(s) on disk that pass 'repo' to it were left alone" in message.message
    assert message.message.endswith(": disk.flow.json")


async def test_broken_documents_and_symbols(client: LanguageClient):
    uri = await open_flow(client, "e.flow.json", "[" * (1 << 20))
    assert "E0001" in [d.code for d in client.diagnostics[uri]]
    uri = await open_flow(client, "f.flow.json", FLOW)
    symbols = await client.text_document_document_symbol_async(
        t.DocumentSymbolParams(text_document=t.TextDocumentIdentifier(uri=uri))
    )
    assert [(s.name, s.detail) for s in symbols] == [("scan", "agent"), ("fix", "agent ← scan")]


async def test_a_test_file_beside_its_flow(client: LanguageClient):
    (ROOT / "t.flow.json").write_text(FLOW.replace("{steps.scna.output}", "{steps.scan.output}"))
    text = """{"flow": "t.flow.json", "tests": [
  {"name": "fix runs", "answers": {"scan": {"json": {"severity": "low"}}, "fx": "done", "": "x"}}
]}"""
    uri = await open_flow(client, "t.test.json", text)
    # The unknown node with its nearest id, the invalid pattern.
    diags = client.diagnostics[uri]
    assert [d.code for d in diags] == ["T0005", "T0004"], diags
    assert diags[0].range.start == position(text, '"fx"')
    assert "did you mean 'fix'?" in diags[0].message
    doc = t.TextDocumentIdentifier(uri=uri)
    items = await client.text_document_completion_async(
        t.CompletionParams(text_document=doc, position=position(text, '"": "x"', 1))
    )
    items = items.items if hasattr(items, "items") else items
    assert [i.label for i in items] == ["fix", "*"]
    hover = await client.text_document_hover_async(
        t.HoverParams(text_document=doc, position=position(text, '"scan"', 2))
    )
    assert hover.contents.value.startswith("**phase `scan`** (agent)")
    assert "task: Scan {args.repo}" in hover.contents.value


async def test_latency_of_a_change_to_1000_phases(client: LanguageClient):
    phases = ['{"id": "p0", "task": "start"}'] + [
        f'{{"id": "p{i}", "dependsOn": ["p{i-1}"], "task": "step {{steps.p{i-1}.output}}"}}'
        for i in range(1, 1000)
    ]
    text = '{"phases": [\n' + ",\n".join(phases) + "\n]}"
    uri = await open_flow(client, "big.flow.json", text)
    assert len(client.diagnostics[uri]) == 0
    broken = text.replace("{steps.p499.output}", "{steps.p999.output}")
    started = time.monotonic()
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=broken)],
        )
    )
    while True:
        await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if client.diagnostics.get(uri):
            break
    elapsed = time.monotonic() - started
    print(f"LATENCY 1000 phases: {elapsed * 1000:.1f} ms")
    assert [d.code for d in client.diagnostics[uri]] == ["E0201"]
    # A debug build in a shared CI machine: the release figure is in benches/lsp.rs.
    assert elapsed < 5.0
