# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tfc_global_optspecs
    string join \n h/help V/version
end

function __fish_tfc_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tfc_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tfc_using_subcommand
    set -l cmd (__fish_tfc_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tfc -n "__fish_tfc_needs_command" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_needs_command" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "check" -d 'Check flows statically: the whole graph, every placeholder and condition'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "run" -d 'Check, then run a flow: only the final output on stdout'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "plan" -d 'Count the agent calls, tokens and cost a run can take, per phase, before it runs'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "resume" -d 'Fork a failed, paused or interrupted run and continue it, reusing its finished phases'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "fork" -d 'Start a new run from any ended run: re-run some phases (--from), replace outputs (--set) or arguments, and copy everything else without paying for it again'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "eval" -d 'Evaluate a template, condition or safeParse against an eval context'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "test" -d 'Test flows without spending a token: run *.test.json files, every agent call answered'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "graph" -d 'Print the graph of a flow (Mermaid, SVG or Graphviz), its problems marked'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "report" -d 'Write the self-contained HTML report of a run'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "schema" -d 'Print the JSON Schema (draft 2020-12) of flow files, for editor completion'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "runs" -d 'List this project\'s runs, newest first'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "show" -d 'Show a run (or one phase of it): status, usage, phases; prompts and outputs'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "list" -d 'List saved flows (project and user) with their arguments'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "init" -d 'Set up .tfc/ here: config.toml for the backends found, a default agent, a .gitignore'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "doctor" -d 'Show what tfc sees: backend CLIs, configuration, project root, run store'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "mcp" -d 'Serve the Model Context Protocol on stdio, for coding-agent hosts'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "lsp" -d 'Serve the Language Server Protocol on stdio, for editors: diagnostics as you type, hover, go to definition, rename, completion, quick fixes'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "worker" -d 'Serve runs on Temporal: workflow TfcRun and its activities, with this machine\'s agents'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "cancel" -d 'Cancel a run on Temporal (it ends paused, interrupted)'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "approve" -d 'Decide an approval a run on Temporal waits for'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "completions" -d 'Print the shell completion script for bash, zsh, fish, PowerShell or elvish'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "man" -d 'Print tfc\'s man page (or one command\'s), or write every page with --out'
complete -c tfc -n "__fish_tfc_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfc -n "__fish_tfc_using_subcommand check" -l arg -d 'Check against this invocation argument (repeatable): NAME=VALUE' -r
complete -c tfc -n "__fish_tfc_using_subcommand check" -l args -d 'Check against these invocation arguments (a JSON object)' -r
complete -c tfc -n "__fish_tfc_using_subcommand check" -l allow -d 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable' -r
complete -c tfc -n "__fish_tfc_using_subcommand check" -l format -d '`text`: the diagnostics drawn on stderr; `json`: a report on stdout' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand check" -l color -d 'Colour in text output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c tfc -n "__fish_tfc_using_subcommand check" -l strict -d 'Report interpolation warnings as errors (overrides the flow\'s strictInterpolation)'
complete -c tfc -n "__fish_tfc_using_subcommand check" -l no-strict -d 'Do not report interpolation warnings as errors'
complete -c tfc -n "__fish_tfc_using_subcommand check" -l types -d 'Also report each placeholder\'s inferred type: a `types` list in the JSON report (span, path, type), or one line per placeholder on stdout in text format'
complete -c tfc -n "__fish_tfc_using_subcommand check" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand check" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l args -d 'Invocation arguments as a JSON object (K=V pairs override it)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l format -d '`text`: the final output on stdout; `json`: the run record instead' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand run" -l dry-run -d 'Print each resolved prompt instead of calling a model (`--dry-run=scripts` also runs scripts). The value needs `=`, so `--dry-run note=x` keeps `note=x` as an argument of the flow' -r -f -a "prompts\t''
scripts\t''"
complete -c tfc -n "__fish_tfc_using_subcommand run" -l backend -d 'Serve every agent with this backend (a configured name, `dry-run`, `replay:FILE`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l agent-backend -d 'Serve one agent with a backend: AGENT=NAME (repeatable)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l agent-cmd -d 'Serve every agent with this command (prompt on stdin, answer on stdout)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l replay -d 'Answer every call from a recorded fixture (`--backend replay:FILE`)' -r -F
complete -c tfc -n "__fish_tfc_using_subcommand run" -l record -d 'Append every agent call to this fixture file' -r -F
complete -c tfc -n "__fish_tfc_using_subcommand run" -l approve -d 'Approve this approval phase (repeatable)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l reject -d 'Reject this approval phase (repeatable)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l reason -d 'The note recorded with --reject' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l concurrency -d 'Max phases running at once (overrides the flow\'s concurrency)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l max-usd -d 'Cost cap in USD for this invocation' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l max-tokens -d 'Token cap for this invocation' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l max-calls -d 'Agent call cap for this invocation (retries, items, iterations each count)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l allow -d 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l color -d 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c tfc -n "__fish_tfc_using_subcommand run" -l engine -d 'Where the run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local (a dry run: always local)' -r -f -a "local\t''
temporal\t''"
complete -c tfc -n "__fish_tfc_using_subcommand run" -l temporal -d 'The Temporal frontend service, HOST:PORT' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l namespace -d 'The Temporal namespace (default: `[engine] namespace`, else `default`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l task-queue -d 'The task queue tfc\'s workers poll (default: `[engine] task_queue`, else `tfc`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l run-id -d 'The run id to use (internal: `tfc mcp` names a run before starting its process)' -r
complete -c tfc -n "__fish_tfc_using_subcommand run" -l report -d 'Write the run\'s HTML report (report.html in its folder) when it ends'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l approve-all -d 'Approve every approval phase'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l allow-writes -d 'Let agents use write/edit/bash tools on unsandboxed backends'
complete -c tfc -n "__fish_tfc_using_subcommand run" -s q -l quiet -d 'Print no warnings (errors, progress and the result still print)'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l incremental -d 'Reuse `done` phase results across runs (the default cache scope becomes cross-run)'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l no-incremental -d 'Do not reuse results across runs, whatever the flow\'s `incremental` says'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l otel-content -d 'With OpenTelemetry export on: put prompts and outputs on the agent call spans (cut to [telemetry] content_max_chars). Off by default: they may hold secrets and code'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l plan -d 'Print the plan (calls, tokens, cost per phase) first and ask before starting; without a terminal nothing runs unless --yes is given'
complete -c tfc -n "__fish_tfc_using_subcommand run" -l yes -d 'With --plan: start after printing the plan, without asking'
complete -c tfc -n "__fish_tfc_using_subcommand run" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand run" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand plan" -l args -d 'Invocation arguments as a JSON object (K=V pairs override it)' -r
complete -c tfc -n "__fish_tfc_using_subcommand plan" -l items -d 'Plan every map with N items (else the `over` source\'s minItems/maxItems)' -r
complete -c tfc -n "__fish_tfc_using_subcommand plan" -l output-tokens -d 'The output tokens of one call: counts output tokens, and the cost of agents with a price' -r
complete -c tfc -n "__fish_tfc_using_subcommand plan" -l format -d '`text`: a table; `json`: the plan as JSON (stable for tools)' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand plan" -l color -d 'Colour in the diagnostics of a flow with errors' -r -f -a "auto\t''
always\t''
never\t''"
complete -c tfc -n "__fish_tfc_using_subcommand plan" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand plan" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l approve -d 'Approve this pending approval (repeatable)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l reject -d 'Reject this pending approval (repeatable)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l reason -d 'The note recorded with --reject' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l phase -d 'Patch this phase (with --task/--model/--timeout/--idle-timeout) and run it and its descendants again' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l task -d 'The patched phase\'s new task' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l model -d 'The patched phase\'s new model' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l timeout -d 'The patched phase\'s new timeout (ms)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l idle-timeout -d 'The patched phase\'s new idle timeout (ms)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l max-usd -d 'Cost cap in USD (applies to the total, the parent\'s spend included)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l max-tokens -d 'Token cap (applies to the total, the parent\'s spend included)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l max-calls -d 'Agent call cap (applies to the total, the parent\'s calls included)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l format -d '`text`: the final output on stdout; `json`: the run record instead' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l backend -d 'Serve every agent with this backend (default: as the parent run did)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l agent-backend -d 'Serve one agent with a backend: AGENT=NAME (default: as the parent run did)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l agent-cmd -d 'Serve every agent with this command (default: as the parent run did)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l color -d 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l engine -d 'Where the new run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local' -r -f -a "local\t''
temporal\t''"
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l temporal -d 'The Temporal frontend service, HOST:PORT' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l namespace -d 'The Temporal namespace (default: `[engine] namespace`, else `default`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l task-queue -d 'The task queue tfc\'s workers poll (default: `[engine] task_queue`, else `tfc`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l run-id -d 'The child run\'s id (internal: `tfc mcp` names a run before starting its process)' -r
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l approve-all -d 'Approve every approval'
complete -c tfc -n "__fish_tfc_using_subcommand resume" -s q -l quiet -d 'Print no warnings'
complete -c tfc -n "__fish_tfc_using_subcommand resume" -l otel-content -d 'With OpenTelemetry export on: put prompts and outputs on the agent call spans'
complete -c tfc -n "__fish_tfc_using_subcommand resume" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand resume" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l args -d 'Argument overrides as a JSON object (K=V pairs override it)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l from -d 'Re-run this phase and its descendants (repeatable)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l set -d 'Give phase P this output and re-run only its descendants: P=TEXT, P=@FILE, or P#i=… for one item of a map (repeatable)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l phase -d 'Patch this phase (with --task/--model/--timeout/--idle-timeout) and run it and its descendants again' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l task -d 'The patched phase\'s new task' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l model -d 'The patched phase\'s new model' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l timeout -d 'The patched phase\'s new timeout (ms)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l idle-timeout -d 'The patched phase\'s new idle timeout (ms)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l max-usd -d 'Cost cap in USD (applies to the total, the parent\'s spend included)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l max-tokens -d 'Token cap (applies to the total, the parent\'s spend included)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l max-calls -d 'Agent call cap (applies to the total, the parent\'s calls included)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l format -d '`text`: the final output on stdout; `json`: the run record instead' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l backend -d 'Serve every agent with this backend (default: as the parent run did)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l agent-backend -d 'Serve one agent with a backend: AGENT=NAME (default: as the parent run did)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l agent-cmd -d 'Serve every agent with this command (default: as the parent run did)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l color -d 'Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l engine -d 'Where the new run executes: here (`local`), or on Temporal workers (`temporal`). Default: `[engine] kind` of the configuration, else local' -r -f -a "local\t''
temporal\t''"
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l temporal -d 'The Temporal frontend service, HOST:PORT' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l namespace -d 'The Temporal namespace (default: `[engine] namespace`, else `default`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l task-queue -d 'The task queue tfc\'s workers poll (default: `[engine] task_queue`, else `tfc`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l run-id -d 'The child run\'s id (internal: `tfc mcp` names a run before starting its process)' -r
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l plan -d 'Print what is copied and what runs (with call bounds) and ask before starting; with no terminal to ask on, nothing runs without the yes flag'
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l yes -d 'With --plan: start after printing it, without asking'
complete -c tfc -n "__fish_tfc_using_subcommand fork" -s q -l quiet -d 'Print no warnings'
complete -c tfc -n "__fish_tfc_using_subcommand fork" -l otel-content -d 'With OpenTelemetry export on: put prompts and outputs on the agent call spans'
complete -c tfc -n "__fish_tfc_using_subcommand fork" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand fork" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "template" -d 'Render a template as text (a placeholder that resolves to nothing stays as written)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "value" -d 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "when" -d 'Evaluate a `when` condition: fail-open (a parse error is true)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "until" -d 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "gate" -d 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "json" -d 'safeParse standard input'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "array" -d 'coerceArray(safeParse(standard input))'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and not __fish_seen_subcommand_from template value when until gate json array help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from template" -l ctx -d 'Eval context file (`-` for stdin); default `{}`' -r
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from template" -l format -d '`text`: the result alone; `json`: the result with what was missing, read and wrong' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from template" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from template" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from value" -l ctx -d 'Eval context file (`-` for stdin); default `{}`' -r
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from value" -l format -d '`text`: the result alone; `json`: the result with what was missing, read and wrong' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from value" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from value" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from when" -l ctx -d 'Eval context file (`-` for stdin); default `{}`' -r
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from when" -l format -d '`text`: the result alone; `json`: the result with what was missing, read and wrong' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from when" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from when" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from until" -l ctx -d 'Eval context file (`-` for stdin); default `{}`' -r
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from until" -l format -d '`text`: the result alone; `json`: the result with what was missing, read and wrong' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from until" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from until" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from gate" -l ctx -d 'Eval context file (`-` for stdin); default `{}`' -r
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from gate" -l format -d '`text`: the result alone; `json`: the result with what was missing, read and wrong' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from gate" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from gate" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from json" -l format -d '`text`: the result alone; `json`: the result with what was missing, read and wrong' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from json" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from json" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from array" -l format -d '`text`: the result alone; `json`: the result with what was missing, read and wrong' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from array" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from array" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "template" -d 'Render a template as text (a placeholder that resolves to nothing stays as written)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "value" -d 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "when" -d 'Evaluate a `when` condition: fail-open (a parse error is true)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "until" -d 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "gate" -d 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "json" -d 'safeParse standard input'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "array" -d 'coerceArray(safeParse(standard input))'
complete -c tfc -n "__fish_tfc_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfc -n "__fish_tfc_using_subcommand test" -l from-run -d 'Make a test of a recorded run (its id, a unique prefix, or `last`) instead of running tests' -r
complete -c tfc -n "__fish_tfc_using_subcommand test" -s o -l output -d 'With --from-run: the test file to write (created, or the test appended to its `tests`); default: print a new test file' -r -F
complete -c tfc -n "__fish_tfc_using_subcommand test" -l name -d 'With --from-run: the test\'s name (default `run <runId>`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand test" -l filter -d 'Run only the tests whose name contains this text' -r
complete -c tfc -n "__fish_tfc_using_subcommand test" -l format -d '`text`: a line per test, then the failures and a summary; `json`: one object per test' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand test" -l junit -d 'Also write the results as JUnit XML to this file (for CI systems)' -r -F
complete -c tfc -n "__fish_tfc_using_subcommand test" -l jobs -d 'Tests run at once (default: the number of cores)' -r
complete -c tfc -n "__fish_tfc_using_subcommand test" -l missing -d 'A call no answer matches: `fail` the test, or `stub` (answered as in a dry run)' -r -f -a "fail\t''
stub\t''"
complete -c tfc -n "__fish_tfc_using_subcommand test" -l property -d 'Run each flow N times with answers generated from its contracts, checking its invariants, instead of running the files\' tests; a violation is shrunk and printed as a test case' -r
complete -c tfc -n "__fish_tfc_using_subcommand test" -l seed -d 'The seed of `--property` (default: random, printed): the same seed repeats the runs' -r
complete -c tfc -n "__fish_tfc_using_subcommand test" -l color -d 'Colour in the diagnostics of invalid test files' -r -f -a "auto\t''
always\t''
never\t''"
complete -c tfc -n "__fish_tfc_using_subcommand test" -l update -d 'Rewrite the plain-string `output`/`prompts` matchers to what the runs produced (snapshot tests), then report the tests as they now stand'
complete -c tfc -n "__fish_tfc_using_subcommand test" -l keep-runs -d 'Write each test\'s run to the run store (.tfc/runs), as `tfc run` does, for `tfc show` and `tfc report`; without it a test writes nothing'
complete -c tfc -n "__fish_tfc_using_subcommand test" -l coverage -d 'Also report which of each flow\'s outcomes (each `when` true and false, gate verdict, loop ending, race winner, approval decision, …) the tests reached'
complete -c tfc -n "__fish_tfc_using_subcommand test" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand test" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand graph" -l direction -d 'Top-down (`td`) or left-to-right (`lr`)' -r -f -a "td\t''
lr\t''"
complete -c tfc -n "__fish_tfc_using_subcommand graph" -l format -d '`mermaid` (the default), `svg` (the drawing, check problems outlined) or `dot` (Graphviz)' -r -f -a "mermaid\t''
svg\t''
dot\t''"
complete -c tfc -n "__fish_tfc_using_subcommand graph" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand graph" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand report" -s o -l output -d 'Where to write the report (`-` for stdout); default: report.html in the run\'s folder' -r -F
complete -c tfc -n "__fish_tfc_using_subcommand report" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand report" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand schema" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand schema" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand runs" -l status -d 'Only runs with this status: completed, failed, blocked, paused, running, interrupted' -r
complete -c tfc -n "__fish_tfc_using_subcommand runs" -l limit -d 'At most this many runs (the newest)' -r
complete -c tfc -n "__fish_tfc_using_subcommand runs" -l format -d '`text`: one line per run; `json`: an array of run summaries' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand runs" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand runs" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand show" -l limit -d 'Cut texts (prompts, outputs) at this many characters' -r
complete -c tfc -n "__fish_tfc_using_subcommand show" -l format -d '`text`: for reading; `json`: the run record (or the phase\'s, with its prompts)' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand show" -l flow -d 'With `last`: the newest run of this flow (its name, or its file)' -r
complete -c tfc -n "__fish_tfc_using_subcommand show" -l json -d 'Same as `--format json`'
complete -c tfc -n "__fish_tfc_using_subcommand show" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand show" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand list" -l format -d '`text`: one line per flow; `json`: an array of saved flows' -r -f -a "text\t''
json\t''"
complete -c tfc -n "__fish_tfc_using_subcommand list" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand list" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand init" -l host -d 'Register `tfc mcp` with a coding-agent host: claude, codex, gemini, opencode or pi (repeatable); default (and `--host` alone): every host CLI found on PATH' -r
complete -c tfc -n "__fish_tfc_using_subcommand init" -l editor -d 'Set an editor up for `tfc lsp` (repeatable): vscode writes .vscode/settings.json (flow files as JSONC, their JSON Schema, `tfc.path` for the extension in editors/vscode) and .vscode/tfc-flow.schema.json; neovim writes .nvim.lua (read with \'exrc\' set; Neovim 0.10+); helix writes .helix/languages.toml. Existing settings are kept' -r
complete -c tfc -n "__fish_tfc_using_subcommand init" -l dry-run -d 'Print what would be written, write nothing'
complete -c tfc -n "__fish_tfc_using_subcommand init" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand init" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand mcp" -l root -d 'The project root: flow paths resolve against it and must stay inside it (default: the project root of the current directory)' -r -F
complete -c tfc -n "__fish_tfc_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand lsp" -l allow -d 'Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable' -r
complete -c tfc -n "__fish_tfc_using_subcommand lsp" -l strict -d 'Report interpolation warnings as errors in every document (overrides each flow\'s strictInterpolation), as `tfc check --strict` does'
complete -c tfc -n "__fish_tfc_using_subcommand lsp" -l no-strict -d 'Do not report interpolation warnings as errors, as `tfc check --no-strict` does'
complete -c tfc -n "__fish_tfc_using_subcommand lsp" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand lsp" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l temporal -d 'The Temporal frontend service, HOST:PORT' -r
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l namespace -d 'The Temporal namespace (default: `[engine] namespace`, else `default`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l task-queue -d 'The task queue tfc\'s workers poll (default: `[engine] task_queue`, else `tfc`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l max-concurrent-calls -d 'At most this many agent calls and scripts at once on this worker' -r
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l max-calls -d 'The old spelling of --max-concurrent-calls (deprecated: `--max-calls` now caps a run\'s agent calls on `tfc run`); accepted for one release, with a warning' -r
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l backend -d 'Serve every agent with this backend (a configured name)' -r
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l agent-cmd -d 'Serve every agent with this command (prompt on stdin, answer on stdout)' -r
complete -c tfc -n "__fish_tfc_using_subcommand worker" -l allow-writes -d 'Let agents use write/edit/bash tools on unsandboxed backends'
complete -c tfc -n "__fish_tfc_using_subcommand worker" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand worker" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand cancel" -l temporal -d 'The Temporal frontend service, HOST:PORT' -r
complete -c tfc -n "__fish_tfc_using_subcommand cancel" -l namespace -d 'The Temporal namespace (default: `[engine] namespace`, else `default`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand cancel" -l task-queue -d 'The task queue tfc\'s workers poll (default: `[engine] task_queue`, else `tfc`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand cancel" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand cancel" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand approve" -l reason -d 'The note recorded with the decision' -r
complete -c tfc -n "__fish_tfc_using_subcommand approve" -l temporal -d 'The Temporal frontend service, HOST:PORT' -r
complete -c tfc -n "__fish_tfc_using_subcommand approve" -l namespace -d 'The Temporal namespace (default: `[engine] namespace`, else `default`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand approve" -l task-queue -d 'The task queue tfc\'s workers poll (default: `[engine] task_queue`, else `tfc`)' -r
complete -c tfc -n "__fish_tfc_using_subcommand approve" -l reject -d 'Reject instead of approving'
complete -c tfc -n "__fish_tfc_using_subcommand approve" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand approve" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand completions" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand completions" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand man" -l out -d 'Write every page into this folder (created if missing) instead of printing one' -r -F
complete -c tfc -n "__fish_tfc_using_subcommand man" -s h -l help -d 'Print help'
complete -c tfc -n "__fish_tfc_using_subcommand man" -s V -l version -d 'Print version'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "check" -d 'Check flows statically: the whole graph, every placeholder and condition'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "run" -d 'Check, then run a flow: only the final output on stdout'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "plan" -d 'Count the agent calls, tokens and cost a run can take, per phase, before it runs'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "resume" -d 'Fork a failed, paused or interrupted run and continue it, reusing its finished phases'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "fork" -d 'Start a new run from any ended run: re-run some phases (--from), replace outputs (--set) or arguments, and copy everything else without paying for it again'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "eval" -d 'Evaluate a template, condition or safeParse against an eval context'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "test" -d 'Test flows without spending a token: run *.test.json files, every agent call answered'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "graph" -d 'Print the graph of a flow (Mermaid, SVG or Graphviz), its problems marked'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "report" -d 'Write the self-contained HTML report of a run'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "schema" -d 'Print the JSON Schema (draft 2020-12) of flow files, for editor completion'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "runs" -d 'List this project\'s runs, newest first'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "show" -d 'Show a run (or one phase of it): status, usage, phases; prompts and outputs'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "list" -d 'List saved flows (project and user) with their arguments'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "init" -d 'Set up .tfc/ here: config.toml for the backends found, a default agent, a .gitignore'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "doctor" -d 'Show what tfc sees: backend CLIs, configuration, project root, run store'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "mcp" -d 'Serve the Model Context Protocol on stdio, for coding-agent hosts'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "lsp" -d 'Serve the Language Server Protocol on stdio, for editors: diagnostics as you type, hover, go to definition, rename, completion, quick fixes'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "worker" -d 'Serve runs on Temporal: workflow TfcRun and its activities, with this machine\'s agents'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "cancel" -d 'Cancel a run on Temporal (it ends paused, interrupted)'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "approve" -d 'Decide an approval a run on Temporal waits for'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "completions" -d 'Print the shell completion script for bash, zsh, fish, PowerShell or elvish'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "man" -d 'Print tfc\'s man page (or one command\'s), or write every page with --out'
complete -c tfc -n "__fish_tfc_using_subcommand help; and not __fish_seen_subcommand_from check run plan resume fork eval test graph report schema runs show list init doctor mcp lsp worker cancel approve completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfc -n "__fish_tfc_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "template" -d 'Render a template as text (a placeholder that resolves to nothing stays as written)'
complete -c tfc -n "__fish_tfc_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "value" -d 'Interpolate a value: a text that is one whole placeholder keeps its raw JSON value'
complete -c tfc -n "__fish_tfc_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "when" -d 'Evaluate a `when` condition: fail-open (a parse error is true)'
complete -c tfc -n "__fish_tfc_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "until" -d 'Evaluate an `until` condition: fail-safe (a parse error stops the loop: true)'
complete -c tfc -n "__fish_tfc_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "gate" -d 'Evaluate one gate `eval` entry (`contains` allowed; a parse error fails)'
complete -c tfc -n "__fish_tfc_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "json" -d 'safeParse standard input'
complete -c tfc -n "__fish_tfc_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "array" -d 'coerceArray(safeParse(standard input))'
