
use builtin;
use str;

set edit:completion:arg-completer[tfc] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'tfc'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'tfc'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand check 'Check flows statically: the whole graph, every placeholder and condition'
            cand run 'Check, then run a flow: only the final output on stdout'
            cand plan 'Count the agent calls, tokens and cost a run can take, per phase, before it runs'
            cand resume 'Fork a failed, paused or interrupted run and continue it, reusing its finished phases'
            cand fork 'Start a new run from any ended run: re-run some phases (--from), replace outputs (--set) or arguments, and copy everything else without paying for it again'
            cand eval 'Evaluate a template, condition or safeParse against an eval context'
            cand test 'Test flows without spending a token: run *.test.json files, every agent call answered'
            cand graph 'Print the graph of a flow (Mermaid, SVG or Graphviz), its problems marked'
            cand report 'Write the self-contained HTML report of a run'
            cand schema 'Print the JSON Schema (draft 2020-12) of flow files, for editor completion'
            cand runs 'List this project''s runs, newest first'
            cand show 'Show a run (or one phase of it): status, usage, phases; prompts and outputs'
            cand list 'List saved flows (project and user) with their arguments'
            cand init 'Set up .tfc/ here: config.toml for the backends found, a default agent, a .gitignore'
            cand doctor 'Show what tfc sees: backend CLIs, configuration, project root, run store'
            cand mcp 'Serve the Model Context Protocol on stdio, for coding-agent hosts'
            cand lsp 'Serve the Language Server Protocol on stdio, for editors: diagnostics as you type, hover, go to definition, rename, completion, quick fixes'
            cand worker 'Serve runs on Temporal: workflow TfcRun and its activities, with this machine''s agents'
            cand cancel 'Cancel a run on Temporal (it ends paused, interrupted)'
            cand approve 'Decide an approval a run on Temporal waits for'
            cand completions 'Print the shell completion script for bash, zsh, fish, PowerShell or elvish'
            cand man 'Print tfc''s man page (or one command''s), or write every page with --out'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tfc;check'= {
            cand --arg 'Check against this invocation argument (repeatable): NAME=VALUE'
            cand --args 'Check against these invocation arguments (a JSON object)'
            cand --allow 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable'
            cand --format '`text`: the diagnostics drawn on stderr; `json`: a report on stdout'
            cand --color 'Colour in text output'
            cand --strict 'Report interpolation warnings as errors (overrides the flow''s strictInterpolation)'
            cand --no-strict 'Do not report interpolation warnings as errors'
            cand --types 'Also report each placeholder''s inferred type: a `types` list in the JSON report (span, path, type), or one line per placeholder on stdout in text format'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;run'= {
            cand --args 'Invocation arguments as a JSON object (K=V pairs override it)'
            cand --format '`text`: the final output on stdout; `json`: the run record instead'
            cand --dry-run 'Print each resolved prompt instead of calling a model (`--dry-run=scripts` also runs scripts). The value needs `=`, so `--dry-run note=x` keeps `note=x` as an argument of the flow'
            cand --backend 'Serve every agent with this backend (a configured name, `dry-run`, `replay:FILE`)'
            cand --agent-backend 'Serve one agent with a backend: AGENT=NAME (repeatable)'
            cand --agent-cmd 'Serve every agent with this command (prompt on stdin, answer on stdout)'
            cand --replay 'Answer every call from a recorded fixture (`--backend replay:FILE`)'
            cand --record 'Append every agent call to this fixture file'
            cand --approve 'Approve this approval phase (repeatable)'
            cand --reject 'Reject this approval phase (repeatable)'
            cand --reason 'The note recorded with --reject'
            cand --concurrency 'Max phases running at once (overrides the flow''s concurrency)'
            cand --max-usd 'Cost cap in USD for this invocation'
            cand --max-tokens 'Token cap for this invocation'
            cand --max-calls 'Agent call cap for this invocation (retries, items, iterations each count)'
            cand --allow 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable'
            cand --color 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)'
            cand --engine 'Where the run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local (a dry run: always local)'
            cand --temporal 'The Temporal frontend service, HOST:PORT'
            cand --namespace 'The Temporal namespace (default: `[engine] namespace`, else `default`)'
            cand --task-queue 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)'
            cand --run-id 'The run id to use (internal: `tfc mcp` names a run before starting its process)'
            cand --report 'Write the run''s HTML report (report.html in its folder) when it ends'
            cand --approve-all 'Approve every approval phase'
            cand --allow-writes 'Let agents use write/edit/bash tools on unsandboxed backends'
            cand -q 'Print no warnings (errors, progress and the result still print)'
            cand --quiet 'Print no warnings (errors, progress and the result still print)'
            cand --incremental 'Reuse `done` phase results across runs (the default cache scope becomes cross-run)'
            cand --no-incremental 'Do not reuse results across runs, whatever the flow''s `incremental` says'
            cand --otel-content 'With OpenTelemetry export on: put prompts and outputs on the agent call spans (cut to [telemetry] content_max_chars). Off by default: they may hold secrets and code'
            cand --plan 'Print the plan (calls, tokens, cost per phase) first and ask before starting; without a terminal nothing runs unless --yes is given'
            cand --yes 'With --plan: start after printing the plan, without asking'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;plan'= {
            cand --args 'Invocation arguments as a JSON object (K=V pairs override it)'
            cand --items 'Plan every map with N items (else the `over` source''s minItems/maxItems)'
            cand --output-tokens 'The output tokens of one call: counts output tokens, and the cost of agents with a price'
            cand --format '`text`: a table; `json`: the plan as JSON (stable for tools)'
            cand --color 'Colour in the diagnostics of a flow with errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;resume'= {
            cand --approve 'Approve this pending approval (repeatable)'
            cand --reject 'Reject this pending approval (repeatable)'
            cand --reason 'The note recorded with --reject'
            cand --phase 'Patch this phase (with --task/--model/--timeout/--idle-timeout) and run it and its descendants again'
            cand --task 'The patched phase''s new task'
            cand --model 'The patched phase''s new model'
            cand --timeout 'The patched phase''s new timeout (ms)'
            cand --idle-timeout 'The patched phase''s new idle timeout (ms)'
            cand --max-usd 'Cost cap in USD (applies to the total, the parent''s spend included)'
            cand --max-tokens 'Token cap (applies to the total, the parent''s spend included)'
            cand --max-calls 'Agent call cap (applies to the total, the parent''s calls included)'
            cand --format '`text`: the final output on stdout; `json`: the run record instead'
            cand --backend 'Serve every agent with this backend (default: as the parent run did)'
            cand --agent-backend 'Serve one agent with a backend: AGENT=NAME (default: as the parent run did)'
            cand --agent-cmd 'Serve every agent with this command (default: as the parent run did)'
            cand --color 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)'
            cand --engine 'Where the new run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local'
            cand --temporal 'The Temporal frontend service, HOST:PORT'
            cand --namespace 'The Temporal namespace (default: `[engine] namespace`, else `default`)'
            cand --task-queue 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)'
            cand --run-id 'The child run''s id (internal: `tfc mcp` names a run before starting its process)'
            cand --approve-all 'Approve every approval'
            cand -q 'Print no warnings'
            cand --quiet 'Print no warnings'
            cand --otel-content 'With OpenTelemetry export on: put prompts and outputs on the agent call spans'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;fork'= {
            cand --args 'Argument overrides as a JSON object (K=V pairs override it)'
            cand --from 'Re-run this phase and its descendants (repeatable)'
            cand --set 'Give phase P this output and re-run only its descendants: P=TEXT, P=@FILE, or P#i=… for one item of a map (repeatable)'
            cand --phase 'Patch this phase (with --task/--model/--timeout/--idle-timeout) and run it and its descendants again'
            cand --task 'The patched phase''s new task'
            cand --model 'The patched phase''s new model'
            cand --timeout 'The patched phase''s new timeout (ms)'
            cand --idle-timeout 'The patched phase''s new idle timeout (ms)'
            cand --max-usd 'Cost cap in USD (applies to the total, the parent''s spend included)'
            cand --max-tokens 'Token cap (applies to the total, the parent''s spend included)'
            cand --max-calls 'Agent call cap (applies to the total, the parent''s calls included)'
            cand --format '`text`: the final output on stdout; `json`: the run record instead'
            cand --backend 'Serve every agent with this backend (default: as the parent run did)'
            cand --agent-backend 'Serve one agent with a backend: AGENT=NAME (default: as the parent run did)'
            cand --agent-cmd 'Serve every agent with this command (default: as the parent run did)'
            cand --color 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)'
            cand --engine 'Where the new run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local'
            cand --temporal 'The Temporal frontend service, HOST:PORT'
            cand --namespace 'The Temporal namespace (default: `[engine] namespace`, else `default`)'
            cand --task-queue 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)'
            cand --run-id 'The child run''s id (internal: `tfc mcp` names a run before starting its process)'
            cand --plan 'Print what is copied and what runs (with call bounds) and ask before starting; with no terminal to ask on, nothing runs without the yes flag'
            cand --yes 'With --plan: start after printing it, without asking'
            cand -q 'Print no warnings'
            cand --quiet 'Print no warnings'
            cand --otel-content 'With OpenTelemetry export on: put prompts and outputs on the agent call spans'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand template 'Render a template as text (a placeholder that resolves to nothing stays as written)'
            cand value 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value'
            cand when 'Evaluate a `when` condition: fail-open (a parse error is true)'
            cand until 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)'
            cand gate 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)'
            cand json 'safeParse standard input'
            cand array 'coerceArray(safeParse(standard input))'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tfc;eval;template'= {
            cand --ctx 'Eval context file (`-` for stdin); default `{}`'
            cand --format '`text`: the result alone; `json`: the result with what was missing, read and wrong'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval;value'= {
            cand --ctx 'Eval context file (`-` for stdin); default `{}`'
            cand --format '`text`: the result alone; `json`: the result with what was missing, read and wrong'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval;when'= {
            cand --ctx 'Eval context file (`-` for stdin); default `{}`'
            cand --format '`text`: the result alone; `json`: the result with what was missing, read and wrong'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval;until'= {
            cand --ctx 'Eval context file (`-` for stdin); default `{}`'
            cand --format '`text`: the result alone; `json`: the result with what was missing, read and wrong'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval;gate'= {
            cand --ctx 'Eval context file (`-` for stdin); default `{}`'
            cand --format '`text`: the result alone; `json`: the result with what was missing, read and wrong'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval;json'= {
            cand --format '`text`: the result alone; `json`: the result with what was missing, read and wrong'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval;array'= {
            cand --format '`text`: the result alone; `json`: the result with what was missing, read and wrong'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;eval;help'= {
            cand template 'Render a template as text (a placeholder that resolves to nothing stays as written)'
            cand value 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value'
            cand when 'Evaluate a `when` condition: fail-open (a parse error is true)'
            cand until 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)'
            cand gate 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)'
            cand json 'safeParse standard input'
            cand array 'coerceArray(safeParse(standard input))'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tfc;eval;help;template'= {
        }
        &'tfc;eval;help;value'= {
        }
        &'tfc;eval;help;when'= {
        }
        &'tfc;eval;help;until'= {
        }
        &'tfc;eval;help;gate'= {
        }
        &'tfc;eval;help;json'= {
        }
        &'tfc;eval;help;array'= {
        }
        &'tfc;eval;help;help'= {
        }
        &'tfc;test'= {
            cand --from-run 'Make a test of a recorded run (its id, a unique prefix, or `last`) instead of running tests'
            cand -o 'With --from-run: the test file to write (created, or the test appended to its `tests`); default: print a new test file'
            cand --output 'With --from-run: the test file to write (created, or the test appended to its `tests`); default: print a new test file'
            cand --name 'With --from-run: the test''s name (default `run <runId>`)'
            cand --filter 'Run only the tests whose name contains this text'
            cand --format '`text`: a line per test, then the failures and a summary; `json`: one object per test'
            cand --junit 'Also write the results as JUnit XML to this file (for CI systems)'
            cand --jobs 'Tests run at once (default: the number of cores)'
            cand --missing 'A call no answer matches: `fail` the test, or `stub` (answered as in a dry run)'
            cand --property 'Run each flow N times with answers generated from its contracts, checking its invariants, instead of running the files'' tests; a violation is shrunk and printed as a test case'
            cand --seed 'The seed of `--property` (default: random, printed): the same seed repeats the runs'
            cand --color 'Colour in the diagnostics of invalid test files'
            cand --update 'Rewrite the plain-string `output`/`prompts` matchers to what the runs produced (snapshot tests), then report the tests as they now stand'
            cand --keep-runs 'Write each test''s run to the run store (.tfc/runs), as `tfc run` does, for `tfc show` and `tfc report`; without it a test writes nothing'
            cand --coverage 'Also report which of each flow''s outcomes (each `when` true and false, gate verdict, loop ending, race winner, approval decision, …) the tests reached'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;graph'= {
            cand --direction 'Top-down (`td`) or left-to-right (`lr`)'
            cand --format '`mermaid` (the default), `svg` (the drawing, check problems outlined) or `dot` (Graphviz)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;report'= {
            cand -o 'Where to write the report (`-` for stdout); default: report.html in the run''s folder'
            cand --output 'Where to write the report (`-` for stdout); default: report.html in the run''s folder'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;schema'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;runs'= {
            cand --status 'Only runs with this status: completed, failed, blocked, paused, running, interrupted'
            cand --limit 'At most this many runs (the newest)'
            cand --format '`text`: one line per run; `json`: an array of run summaries'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;show'= {
            cand --limit 'Cut texts (prompts, outputs) at this many characters'
            cand --format '`text`: for reading; `json`: the run record (or the phase''s, with its prompts)'
            cand --flow 'With `last`: the newest run of this flow (its name, or its file)'
            cand --json 'Same as `--format json`'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;list'= {
            cand --format '`text`: one line per flow; `json`: an array of saved flows'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;init'= {
            cand --host 'Register `tfc mcp` with a coding-agent host: claude, codex, gemini, opencode or pi (repeatable); default (and `--host` alone): every host CLI found on PATH'
            cand --editor 'Set an editor up for `tfc lsp` (repeatable): vscode writes .vscode/settings.json (flow files as JSONC, their JSON Schema, `tfc.path` for the extension in editors/vscode) and .vscode/tfc-flow.schema.json; neovim writes .nvim.lua (read with ''exrc'' set; Neovim 0.10+); helix writes .helix/languages.toml. Existing settings are kept'
            cand --dry-run 'Print what would be written, write nothing'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;doctor'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;mcp'= {
            cand --root 'The project root: flow paths resolve against it and must stay inside it (default: the project root of the current directory)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;lsp'= {
            cand --allow 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable'
            cand --strict 'Report interpolation warnings as errors in every document (overrides each flow''s strictInterpolation), as `tfc check --strict` does'
            cand --no-strict 'Do not report interpolation warnings as errors, as `tfc check --no-strict` does'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;worker'= {
            cand --temporal 'The Temporal frontend service, HOST:PORT'
            cand --namespace 'The Temporal namespace (default: `[engine] namespace`, else `default`)'
            cand --task-queue 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)'
            cand --max-concurrent-calls 'At most this many agent calls and scripts at once on this worker'
            cand --max-calls 'The old spelling of --max-concurrent-calls (deprecated: `--max-calls` now caps a run''s agent calls on `tfc run`); accepted for one release, with a warning'
            cand --backend 'Serve every agent with this backend (a configured name)'
            cand --agent-cmd 'Serve every agent with this command (prompt on stdin, answer on stdout)'
            cand --allow-writes 'Let agents use write/edit/bash tools on unsandboxed backends'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;cancel'= {
            cand --temporal 'The Temporal frontend service, HOST:PORT'
            cand --namespace 'The Temporal namespace (default: `[engine] namespace`, else `default`)'
            cand --task-queue 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;approve'= {
            cand --reason 'The note recorded with the decision'
            cand --temporal 'The Temporal frontend service, HOST:PORT'
            cand --namespace 'The Temporal namespace (default: `[engine] namespace`, else `default`)'
            cand --task-queue 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)'
            cand --reject 'Reject instead of approving'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;man'= {
            cand --out 'Write every page into this folder (created if missing) instead of printing one'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'tfc;help'= {
            cand check 'Check flows statically: the whole graph, every placeholder and condition'
            cand run 'Check, then run a flow: only the final output on stdout'
            cand plan 'Count the agent calls, tokens and cost a run can take, per phase, before it runs'
            cand resume 'Fork a failed, paused or interrupted run and continue it, reusing its finished phases'
            cand fork 'Start a new run from any ended run: re-run some phases (--from), replace outputs (--set) or arguments, and copy everything else without paying for it again'
            cand eval 'Evaluate a template, condition or safeParse against an eval context'
            cand test 'Test flows without spending a token: run *.test.json files, every agent call answered'
            cand graph 'Print the graph of a flow (Mermaid, SVG or Graphviz), its problems marked'
            cand report 'Write the self-contained HTML report of a run'
            cand schema 'Print the JSON Schema (draft 2020-12) of flow files, for editor completion'
            cand runs 'List this project''s runs, newest first'
            cand show 'Show a run (or one phase of it): status, usage, phases; prompts and outputs'
            cand list 'List saved flows (project and user) with their arguments'
            cand init 'Set up .tfc/ here: config.toml for the backends found, a default agent, a .gitignore'
            cand doctor 'Show what tfc sees: backend CLIs, configuration, project root, run store'
            cand mcp 'Serve the Model Context Protocol on stdio, for coding-agent hosts'
            cand lsp 'Serve the Language Server Protocol on stdio, for editors: diagnostics as you type, hover, go to definition, rename, completion, quick fixes'
            cand worker 'Serve runs on Temporal: workflow TfcRun and its activities, with this machine''s agents'
            cand cancel 'Cancel a run on Temporal (it ends paused, interrupted)'
            cand approve 'Decide an approval a run on Temporal waits for'
            cand completions 'Print the shell completion script for bash, zsh, fish, PowerShell or elvish'
            cand man 'Print tfc''s man page (or one command''s), or write every page with --out'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tfc;help;check'= {
        }
        &'tfc;help;run'= {
        }
        &'tfc;help;plan'= {
        }
        &'tfc;help;resume'= {
        }
        &'tfc;help;fork'= {
        }
        &'tfc;help;eval'= {
            cand template 'Render a template as text (a placeholder that resolves to nothing stays as written)'
            cand value 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value'
            cand when 'Evaluate a `when` condition: fail-open (a parse error is true)'
            cand until 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)'
            cand gate 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)'
            cand json 'safeParse standard input'
            cand array 'coerceArray(safeParse(standard input))'
        }
        &'tfc;help;eval;template'= {
        }
        &'tfc;help;eval;value'= {
        }
        &'tfc;help;eval;when'= {
        }
        &'tfc;help;eval;until'= {
        }
        &'tfc;help;eval;gate'= {
        }
        &'tfc;help;eval;json'= {
        }
        &'tfc;help;eval;array'= {
        }
        &'tfc;help;test'= {
        }
        &'tfc;help;graph'= {
        }
        &'tfc;help;report'= {
        }
        &'tfc;help;schema'= {
        }
        &'tfc;help;runs'= {
        }
        &'tfc;help;show'= {
        }
        &'tfc;help;list'= {
        }
        &'tfc;help;init'= {
        }
        &'tfc;help;doctor'= {
        }
        &'tfc;help;mcp'= {
        }
        &'tfc;help;lsp'= {
        }
        &'tfc;help;worker'= {
        }
        &'tfc;help;cancel'= {
        }
        &'tfc;help;approve'= {
        }
        &'tfc;help;completions'= {
        }
        &'tfc;help;man'= {
        }
        &'tfc;help;help'= {
        }
    ]
    $completions[$command]
}
