
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'tfc' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'tfc'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'tfc' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check flows statically: the whole graph, every placeholder and condition')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Check, then run a flow: only the final output on stdout')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Count the agent calls, tokens and cost a run can take, per phase, before it runs')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Fork a failed, paused or interrupted run and continue it, reusing its finished phases')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Start a new run from any ended run: re-run some phases (--from), replace outputs (--set) or arguments, and copy everything else without paying for it again')
            [CompletionResult]::new('eval', 'eval', [CompletionResultType]::ParameterValue, 'Evaluate a template, condition or safeParse against an eval context')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Test flows without spending a token: run *.test.json files, every agent call answered')
            [CompletionResult]::new('graph', 'graph', [CompletionResultType]::ParameterValue, 'Print the graph of a flow (Mermaid, SVG or Graphviz), its problems marked')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Write the self-contained HTML report of a run')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema (draft 2020-12) of flow files, for editor completion')
            [CompletionResult]::new('runs', 'runs', [CompletionResultType]::ParameterValue, 'List this project''s runs, newest first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show a run (or one phase of it): status, usage, phases; prompts and outputs')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List saved flows (project and user) with their arguments')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Set up .tfc/ here: config.toml for the backends found, a default agent, a .gitignore')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Show what tfc sees: backend CLIs, configuration, project root, run store')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the Model Context Protocol on stdio, for coding-agent hosts')
            [CompletionResult]::new('lsp', 'lsp', [CompletionResultType]::ParameterValue, 'Serve the Language Server Protocol on stdio, for editors: diagnostics as you type, hover, go to definition, rename, completion, quick fixes')
            [CompletionResult]::new('worker', 'worker', [CompletionResultType]::ParameterValue, 'Serve runs on Temporal: workflow TfcRun and its activities, with this machine''s agents')
            [CompletionResult]::new('cancel', 'cancel', [CompletionResultType]::ParameterValue, 'Cancel a run on Temporal (it ends paused, interrupted)')
            [CompletionResult]::new('approve', 'approve', [CompletionResultType]::ParameterValue, 'Decide an approval a run on Temporal waits for')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print the shell completion script for bash, zsh, fish, PowerShell or elvish')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print tfc''s man page (or one command''s), or write every page with --out')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tfc;check' {
            [CompletionResult]::new('--arg', '--arg', [CompletionResultType]::ParameterName, 'Check against this invocation argument (repeatable): NAME=VALUE')
            [CompletionResult]::new('--args', '--args', [CompletionResultType]::ParameterName, 'Check against these invocation arguments (a JSON object)')
            [CompletionResult]::new('--allow', '--allow', [CompletionResultType]::ParameterName, 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the diagnostics drawn on stderr; `json`: a report on stdout')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour in text output')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Report interpolation warnings as errors (overrides the flow''s strictInterpolation)')
            [CompletionResult]::new('--no-strict', '--no-strict', [CompletionResultType]::ParameterName, 'Do not report interpolation warnings as errors')
            [CompletionResult]::new('--types', '--types', [CompletionResultType]::ParameterName, 'Also report each placeholder''s inferred type: a `types` list in the JSON report (span, path, type), or one line per placeholder on stdout in text format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;run' {
            [CompletionResult]::new('--args', '--args', [CompletionResultType]::ParameterName, 'Invocation arguments as a JSON object (K=V pairs override it)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the final output on stdout; `json`: the run record instead')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print each resolved prompt instead of calling a model (`--dry-run=scripts` also runs scripts). The value needs `=`, so `--dry-run note=x` keeps `note=x` as an argument of the flow')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Serve every agent with this backend (a configured name, `dry-run`, `replay:FILE`)')
            [CompletionResult]::new('--agent-backend', '--agent-backend', [CompletionResultType]::ParameterName, 'Serve one agent with a backend: AGENT=NAME (repeatable)')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Serve every agent with this command (prompt on stdin, answer on stdout)')
            [CompletionResult]::new('--replay', '--replay', [CompletionResultType]::ParameterName, 'Answer every call from a recorded fixture (`--backend replay:FILE`)')
            [CompletionResult]::new('--record', '--record', [CompletionResultType]::ParameterName, 'Append every agent call to this fixture file')
            [CompletionResult]::new('--approve', '--approve', [CompletionResultType]::ParameterName, 'Approve this approval phase (repeatable)')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Reject this approval phase (repeatable)')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'The note recorded with --reject')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Max phases running at once (overrides the flow''s concurrency)')
            [CompletionResult]::new('--max-usd', '--max-usd', [CompletionResultType]::ParameterName, 'Cost cap in USD for this invocation')
            [CompletionResult]::new('--max-tokens', '--max-tokens', [CompletionResultType]::ParameterName, 'Token cap for this invocation')
            [CompletionResult]::new('--max-calls', '--max-calls', [CompletionResultType]::ParameterName, 'Agent call cap for this invocation (retries, items, iterations each count)')
            [CompletionResult]::new('--allow', '--allow', [CompletionResultType]::ParameterName, 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)')
            [CompletionResult]::new('--engine', '--engine', [CompletionResultType]::ParameterName, 'Where the run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local (a dry run: always local)')
            [CompletionResult]::new('--temporal', '--temporal', [CompletionResultType]::ParameterName, 'The Temporal frontend service, HOST:PORT')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The Temporal namespace (default: `[engine] namespace`, else `default`)')
            [CompletionResult]::new('--task-queue', '--task-queue', [CompletionResultType]::ParameterName, 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)')
            [CompletionResult]::new('--run-id', '--run-id', [CompletionResultType]::ParameterName, 'The run id to use (internal: `tfc mcp` names a run before starting its process)')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write the run''s HTML report (report.html in its folder) when it ends')
            [CompletionResult]::new('--approve-all', '--approve-all', [CompletionResultType]::ParameterName, 'Approve every approval phase')
            [CompletionResult]::new('--allow-writes', '--allow-writes', [CompletionResultType]::ParameterName, 'Let agents use write/edit/bash tools on unsandboxed backends')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings (errors, progress and the result still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings (errors, progress and the result still print)')
            [CompletionResult]::new('--incremental', '--incremental', [CompletionResultType]::ParameterName, 'Reuse `done` phase results across runs (the default cache scope becomes cross-run)')
            [CompletionResult]::new('--no-incremental', '--no-incremental', [CompletionResultType]::ParameterName, 'Do not reuse results across runs, whatever the flow''s `incremental` says')
            [CompletionResult]::new('--otel-content', '--otel-content', [CompletionResultType]::ParameterName, 'With OpenTelemetry export on: put prompts and outputs on the agent call spans (cut to [telemetry] content_max_chars). Off by default: they may hold secrets and code')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Print the plan (calls, tokens, cost per phase) first and ask before starting; without a terminal nothing runs unless --yes is given')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With --plan: start after printing the plan, without asking')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;plan' {
            [CompletionResult]::new('--args', '--args', [CompletionResultType]::ParameterName, 'Invocation arguments as a JSON object (K=V pairs override it)')
            [CompletionResult]::new('--items', '--items', [CompletionResultType]::ParameterName, 'Plan every map with N items (else the `over` source''s minItems/maxItems)')
            [CompletionResult]::new('--output-tokens', '--output-tokens', [CompletionResultType]::ParameterName, 'The output tokens of one call: counts output tokens, and the cost of agents with a price')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: a table; `json`: the plan as JSON (stable for tools)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour in the diagnostics of a flow with errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;resume' {
            [CompletionResult]::new('--approve', '--approve', [CompletionResultType]::ParameterName, 'Approve this pending approval (repeatable)')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Reject this pending approval (repeatable)')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'The note recorded with --reject')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'Patch this phase (with --task/--model/--timeout/--idle-timeout) and run it and its descendants again')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The patched phase''s new task')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The patched phase''s new model')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'The patched phase''s new timeout (ms)')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'The patched phase''s new idle timeout (ms)')
            [CompletionResult]::new('--max-usd', '--max-usd', [CompletionResultType]::ParameterName, 'Cost cap in USD (applies to the total, the parent''s spend included)')
            [CompletionResult]::new('--max-tokens', '--max-tokens', [CompletionResultType]::ParameterName, 'Token cap (applies to the total, the parent''s spend included)')
            [CompletionResult]::new('--max-calls', '--max-calls', [CompletionResultType]::ParameterName, 'Agent call cap (applies to the total, the parent''s calls included)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the final output on stdout; `json`: the run record instead')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Serve every agent with this backend (default: as the parent run did)')
            [CompletionResult]::new('--agent-backend', '--agent-backend', [CompletionResultType]::ParameterName, 'Serve one agent with a backend: AGENT=NAME (default: as the parent run did)')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Serve every agent with this command (default: as the parent run did)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)')
            [CompletionResult]::new('--engine', '--engine', [CompletionResultType]::ParameterName, 'Where the new run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local')
            [CompletionResult]::new('--temporal', '--temporal', [CompletionResultType]::ParameterName, 'The Temporal frontend service, HOST:PORT')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The Temporal namespace (default: `[engine] namespace`, else `default`)')
            [CompletionResult]::new('--task-queue', '--task-queue', [CompletionResultType]::ParameterName, 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)')
            [CompletionResult]::new('--run-id', '--run-id', [CompletionResultType]::ParameterName, 'The child run''s id (internal: `tfc mcp` names a run before starting its process)')
            [CompletionResult]::new('--approve-all', '--approve-all', [CompletionResultType]::ParameterName, 'Approve every approval')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings')
            [CompletionResult]::new('--otel-content', '--otel-content', [CompletionResultType]::ParameterName, 'With OpenTelemetry export on: put prompts and outputs on the agent call spans')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;fork' {
            [CompletionResult]::new('--args', '--args', [CompletionResultType]::ParameterName, 'Argument overrides as a JSON object (K=V pairs override it)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Re-run this phase and its descendants (repeatable)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Give phase P this output and re-run only its descendants: P=TEXT, P=@FILE, or P#i=… for one item of a map (repeatable)')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'Patch this phase (with --task/--model/--timeout/--idle-timeout) and run it and its descendants again')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The patched phase''s new task')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The patched phase''s new model')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'The patched phase''s new timeout (ms)')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'The patched phase''s new idle timeout (ms)')
            [CompletionResult]::new('--max-usd', '--max-usd', [CompletionResultType]::ParameterName, 'Cost cap in USD (applies to the total, the parent''s spend included)')
            [CompletionResult]::new('--max-tokens', '--max-tokens', [CompletionResultType]::ParameterName, 'Token cap (applies to the total, the parent''s spend included)')
            [CompletionResult]::new('--max-calls', '--max-calls', [CompletionResultType]::ParameterName, 'Agent call cap (applies to the total, the parent''s calls included)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the final output on stdout; `json`: the run record instead')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Serve every agent with this backend (default: as the parent run did)')
            [CompletionResult]::new('--agent-backend', '--agent-backend', [CompletionResultType]::ParameterName, 'Serve one agent with a backend: AGENT=NAME (default: as the parent run did)')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Serve every agent with this command (default: as the parent run did)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)')
            [CompletionResult]::new('--engine', '--engine', [CompletionResultType]::ParameterName, 'Where the new run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local')
            [CompletionResult]::new('--temporal', '--temporal', [CompletionResultType]::ParameterName, 'The Temporal frontend service, HOST:PORT')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The Temporal namespace (default: `[engine] namespace`, else `default`)')
            [CompletionResult]::new('--task-queue', '--task-queue', [CompletionResultType]::ParameterName, 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)')
            [CompletionResult]::new('--run-id', '--run-id', [CompletionResultType]::ParameterName, 'The child run''s id (internal: `tfc mcp` names a run before starting its process)')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Print what is copied and what runs (with call bounds) and ask before starting; with no terminal to ask on, nothing runs without the yes flag')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With --plan: start after printing it, without asking')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings')
            [CompletionResult]::new('--otel-content', '--otel-content', [CompletionResultType]::ParameterName, 'With OpenTelemetry export on: put prompts and outputs on the agent call spans')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('template', 'template', [CompletionResultType]::ParameterValue, 'Render a template as text (a placeholder that resolves to nothing stays as written)')
            [CompletionResult]::new('value', 'value', [CompletionResultType]::ParameterValue, 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value')
            [CompletionResult]::new('when', 'when', [CompletionResultType]::ParameterValue, 'Evaluate a `when` condition: fail-open (a parse error is true)')
            [CompletionResult]::new('until', 'until', [CompletionResultType]::ParameterValue, 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)')
            [CompletionResult]::new('gate', 'gate', [CompletionResultType]::ParameterValue, 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)')
            [CompletionResult]::new('json', 'json', [CompletionResultType]::ParameterValue, 'safeParse standard input')
            [CompletionResult]::new('array', 'array', [CompletionResultType]::ParameterValue, 'coerceArray(safeParse(standard input))')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tfc;eval;template' {
            [CompletionResult]::new('--ctx', '--ctx', [CompletionResultType]::ParameterName, 'Eval context file (`-` for stdin); default `{}`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the result alone; `json`: the result with what was missing, read and wrong')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval;value' {
            [CompletionResult]::new('--ctx', '--ctx', [CompletionResultType]::ParameterName, 'Eval context file (`-` for stdin); default `{}`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the result alone; `json`: the result with what was missing, read and wrong')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval;when' {
            [CompletionResult]::new('--ctx', '--ctx', [CompletionResultType]::ParameterName, 'Eval context file (`-` for stdin); default `{}`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the result alone; `json`: the result with what was missing, read and wrong')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval;until' {
            [CompletionResult]::new('--ctx', '--ctx', [CompletionResultType]::ParameterName, 'Eval context file (`-` for stdin); default `{}`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the result alone; `json`: the result with what was missing, read and wrong')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval;gate' {
            [CompletionResult]::new('--ctx', '--ctx', [CompletionResultType]::ParameterName, 'Eval context file (`-` for stdin); default `{}`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the result alone; `json`: the result with what was missing, read and wrong')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval;json' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the result alone; `json`: the result with what was missing, read and wrong')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval;array' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: the result alone; `json`: the result with what was missing, read and wrong')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;eval;help' {
            [CompletionResult]::new('template', 'template', [CompletionResultType]::ParameterValue, 'Render a template as text (a placeholder that resolves to nothing stays as written)')
            [CompletionResult]::new('value', 'value', [CompletionResultType]::ParameterValue, 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value')
            [CompletionResult]::new('when', 'when', [CompletionResultType]::ParameterValue, 'Evaluate a `when` condition: fail-open (a parse error is true)')
            [CompletionResult]::new('until', 'until', [CompletionResultType]::ParameterValue, 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)')
            [CompletionResult]::new('gate', 'gate', [CompletionResultType]::ParameterValue, 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)')
            [CompletionResult]::new('json', 'json', [CompletionResultType]::ParameterValue, 'safeParse standard input')
            [CompletionResult]::new('array', 'array', [CompletionResultType]::ParameterValue, 'coerceArray(safeParse(standard input))')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tfc;eval;help;template' {
            break
        }
        'tfc;eval;help;value' {
            break
        }
        'tfc;eval;help;when' {
            break
        }
        'tfc;eval;help;until' {
            break
        }
        'tfc;eval;help;gate' {
            break
        }
        'tfc;eval;help;json' {
            break
        }
        'tfc;eval;help;array' {
            break
        }
        'tfc;eval;help;help' {
            break
        }
        'tfc;test' {
            [CompletionResult]::new('--from-run', '--from-run', [CompletionResultType]::ParameterName, 'Make a test of a recorded run (its id, a unique prefix, or `last`) instead of running tests')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'With --from-run: the test file to write (created, or the test appended to its `tests`); default: print a new test file')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'With --from-run: the test file to write (created, or the test appended to its `tests`); default: print a new test file')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'With --from-run: the test''s name (default `run <runId>`)')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'Run only the tests whose name contains this text')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: a line per test, then the failures and a summary; `json`: one object per test')
            [CompletionResult]::new('--junit', '--junit', [CompletionResultType]::ParameterName, 'Also write the results as JUnit XML to this file (for CI systems)')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Tests run at once (default: the number of cores)')
            [CompletionResult]::new('--missing', '--missing', [CompletionResultType]::ParameterName, 'A call no answer matches: `fail` the test, or `stub` (answered as in a dry run)')
            [CompletionResult]::new('--property', '--property', [CompletionResultType]::ParameterName, 'Run each flow N times with answers generated from its contracts, checking its invariants, instead of running the files'' tests; a violation is shrunk and printed as a test case')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'The seed of `--property` (default: random, printed): the same seed repeats the runs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour in the diagnostics of invalid test files')
            [CompletionResult]::new('--update', '--update', [CompletionResultType]::ParameterName, 'Rewrite the plain-string `output`/`prompts` matchers to what the runs produced (snapshot tests), then report the tests as they now stand')
            [CompletionResult]::new('--keep-runs', '--keep-runs', [CompletionResultType]::ParameterName, 'Write each test''s run to the run store (.tfc/runs), as `tfc run` does, for `tfc show` and `tfc report`; without it a test writes nothing')
            [CompletionResult]::new('--coverage', '--coverage', [CompletionResultType]::ParameterName, 'Also report which of each flow''s outcomes (each `when` true and false, gate verdict, loop ending, race winner, approval decision, …) the tests reached')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;graph' {
            [CompletionResult]::new('--direction', '--direction', [CompletionResultType]::ParameterName, 'Top-down (`td`) or left-to-right (`lr`)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`mermaid` (the default), `svg` (the drawing, check problems outlined) or `dot` (Graphviz)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;report' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Where to write the report (`-` for stdout); default: report.html in the run''s folder')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Where to write the report (`-` for stdout); default: report.html in the run''s folder')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;schema' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;runs' {
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only runs with this status: completed, failed, blocked, paused, running, interrupted')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most this many runs (the newest)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: one line per run; `json`: an array of run summaries')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;show' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Cut texts (prompts, outputs) at this many characters')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: for reading; `json`: the run record (or the phase''s, with its prompts)')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'With `last`: the newest run of this flow (its name, or its file)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Same as `--format json`')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;list' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`text`: one line per flow; `json`: an array of saved flows')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;init' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Register `tfc mcp` with a coding-agent host: claude, codex, gemini, opencode or pi (repeatable); default (and `--host` alone): every host CLI found on PATH')
            [CompletionResult]::new('--editor', '--editor', [CompletionResultType]::ParameterName, 'Set an editor up for `tfc lsp` (repeatable): vscode writes .vscode/settings.json (flow files as JSONC, their JSON Schema, `tfc.path` for the extension in editors/vscode) and .vscode/tfc-flow.schema.json; neovim writes .nvim.lua (read with ''exrc'' set; Neovim 0.10+); helix writes .helix/languages.toml. Existing settings are kept')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would be written, write nothing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;doctor' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;mcp' {
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The project root: flow paths resolve against it and must stay inside it (default: the project root of the current directory)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;lsp' {
            [CompletionResult]::new('--allow', '--allow', [CompletionResultType]::ParameterName, 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Report interpolation warnings as errors in every document (overrides each flow''s strictInterpolation), as `tfc check --strict` does')
            [CompletionResult]::new('--no-strict', '--no-strict', [CompletionResultType]::ParameterName, 'Do not report interpolation warnings as errors, as `tfc check --no-strict` does')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;worker' {
            [CompletionResult]::new('--temporal', '--temporal', [CompletionResultType]::ParameterName, 'The Temporal frontend service, HOST:PORT')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The Temporal namespace (default: `[engine] namespace`, else `default`)')
            [CompletionResult]::new('--task-queue', '--task-queue', [CompletionResultType]::ParameterName, 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)')
            [CompletionResult]::new('--max-concurrent-calls', '--max-concurrent-calls', [CompletionResultType]::ParameterName, 'At most this many agent calls and scripts at once on this worker')
            [CompletionResult]::new('--max-calls', '--max-calls', [CompletionResultType]::ParameterName, 'The old spelling of --max-concurrent-calls (deprecated: `--max-calls` now caps a run''s agent calls on `tfc run`); accepted for one release, with a warning')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Serve every agent with this backend (a configured name)')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Serve every agent with this command (prompt on stdin, answer on stdout)')
            [CompletionResult]::new('--allow-writes', '--allow-writes', [CompletionResultType]::ParameterName, 'Let agents use write/edit/bash tools on unsandboxed backends')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;cancel' {
            [CompletionResult]::new('--temporal', '--temporal', [CompletionResultType]::ParameterName, 'The Temporal frontend service, HOST:PORT')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The Temporal namespace (default: `[engine] namespace`, else `default`)')
            [CompletionResult]::new('--task-queue', '--task-queue', [CompletionResultType]::ParameterName, 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;approve' {
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'The note recorded with the decision')
            [CompletionResult]::new('--temporal', '--temporal', [CompletionResultType]::ParameterName, 'The Temporal frontend service, HOST:PORT')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The Temporal namespace (default: `[engine] namespace`, else `default`)')
            [CompletionResult]::new('--task-queue', '--task-queue', [CompletionResultType]::ParameterName, 'The task queue tfc''s workers poll (default: `[engine] task_queue`, else `tfc`)')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Reject instead of approving')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;completions' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;man' {
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write every page into this folder (created if missing) instead of printing one')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'tfc;help' {
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check flows statically: the whole graph, every placeholder and condition')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Check, then run a flow: only the final output on stdout')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Count the agent calls, tokens and cost a run can take, per phase, before it runs')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Fork a failed, paused or interrupted run and continue it, reusing its finished phases')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Start a new run from any ended run: re-run some phases (--from), replace outputs (--set) or arguments, and copy everything else without paying for it again')
            [CompletionResult]::new('eval', 'eval', [CompletionResultType]::ParameterValue, 'Evaluate a template, condition or safeParse against an eval context')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Test flows without spending a token: run *.test.json files, every agent call answered')
            [CompletionResult]::new('graph', 'graph', [CompletionResultType]::ParameterValue, 'Print the graph of a flow (Mermaid, SVG or Graphviz), its problems marked')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Write the self-contained HTML report of a run')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema (draft 2020-12) of flow files, for editor completion')
            [CompletionResult]::new('runs', 'runs', [CompletionResultType]::ParameterValue, 'List this project''s runs, newest first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show a run (or one phase of it): status, usage, phases; prompts and outputs')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List saved flows (project and user) with their arguments')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Set up .tfc/ here: config.toml for the backends found, a default agent, a .gitignore')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Show what tfc sees: backend CLIs, configuration, project root, run store')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the Model Context Protocol on stdio, for coding-agent hosts')
            [CompletionResult]::new('lsp', 'lsp', [CompletionResultType]::ParameterValue, 'Serve the Language Server Protocol on stdio, for editors: diagnostics as you type, hover, go to definition, rename, completion, quick fixes')
            [CompletionResult]::new('worker', 'worker', [CompletionResultType]::ParameterValue, 'Serve runs on Temporal: workflow TfcRun and its activities, with this machine''s agents')
            [CompletionResult]::new('cancel', 'cancel', [CompletionResultType]::ParameterValue, 'Cancel a run on Temporal (it ends paused, interrupted)')
            [CompletionResult]::new('approve', 'approve', [CompletionResultType]::ParameterValue, 'Decide an approval a run on Temporal waits for')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print the shell completion script for bash, zsh, fish, PowerShell or elvish')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print tfc''s man page (or one command''s), or write every page with --out')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tfc;help;check' {
            break
        }
        'tfc;help;run' {
            break
        }
        'tfc;help;plan' {
            break
        }
        'tfc;help;resume' {
            break
        }
        'tfc;help;fork' {
            break
        }
        'tfc;help;eval' {
            [CompletionResult]::new('template', 'template', [CompletionResultType]::ParameterValue, 'Render a template as text (a placeholder that resolves to nothing stays as written)')
            [CompletionResult]::new('value', 'value', [CompletionResultType]::ParameterValue, 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value')
            [CompletionResult]::new('when', 'when', [CompletionResultType]::ParameterValue, 'Evaluate a `when` condition: fail-open (a parse error is true)')
            [CompletionResult]::new('until', 'until', [CompletionResultType]::ParameterValue, 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)')
            [CompletionResult]::new('gate', 'gate', [CompletionResultType]::ParameterValue, 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)')
            [CompletionResult]::new('json', 'json', [CompletionResultType]::ParameterValue, 'safeParse standard input')
            [CompletionResult]::new('array', 'array', [CompletionResultType]::ParameterValue, 'coerceArray(safeParse(standard input))')
            break
        }
        'tfc;help;eval;template' {
            break
        }
        'tfc;help;eval;value' {
            break
        }
        'tfc;help;eval;when' {
            break
        }
        'tfc;help;eval;until' {
            break
        }
        'tfc;help;eval;gate' {
            break
        }
        'tfc;help;eval;json' {
            break
        }
        'tfc;help;eval;array' {
            break
        }
        'tfc;help;test' {
            break
        }
        'tfc;help;graph' {
            break
        }
        'tfc;help;report' {
            break
        }
        'tfc;help;schema' {
            break
        }
        'tfc;help;runs' {
            break
        }
        'tfc;help;show' {
            break
        }
        'tfc;help;list' {
            break
        }
        'tfc;help;init' {
            break
        }
        'tfc;help;doctor' {
            break
        }
        'tfc;help;mcp' {
            break
        }
        'tfc;help;lsp' {
            break
        }
        'tfc;help;worker' {
            break
        }
        'tfc;help;cancel' {
            break
        }
        'tfc;help;approve' {
            break
        }
        'tfc;help;completions' {
            break
        }
        'tfc;help;man' {
            break
        }
        'tfc;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
