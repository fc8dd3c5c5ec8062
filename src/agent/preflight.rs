//! Run preflight (SPEC §7.4): before anything executes, check every agent a flow uses against
//! the roster.
//!
//! * E0701 no-backend — the agent resolves to no backend (not in dry-run).
//! * E0702 budget-unmeterable — `maxUSD` with a backend that reports no cost, or `maxTokens`
//!   with one that reports no tokens (not in dry-run).
//! * E0703 writes-not-allowed — write/edit/bash tools on an unsandboxed backend without
//!   `[safety] allow_unsandboxed_writes` or `--allow-writes`.
//! * W0701 undefined-agent — no definition file (empty system prompt). Only where that
//!   changes what a model sees: not for the implicit agent `default` (most flows never name
//!   an agent; warning on every such run would be noise), not in dry-run, and not for an
//!   agent served by a backend that sends no system prompt (replay). Whether it applies
//!   depends on the backend serving the agent: `tfc check` reports it for the backends the
//!   configuration chooses ([`undefined_agents`]); a run, which also knows its command-line
//!   overrides and auto-detection, from here. `tfc run` prints all of them as one line.
//! * W0702 tools-unsupported — tools on a backend that cannot use them (HTTP).
//!
//! Each condition is reported once per agent (E0702 once per backend and cap), on the first
//! phase that uses it.

use super::config_roster::NO_BACKEND_FIXES;
use crate::agent::call::ToolPolicy;
use crate::agent::roster::{ResolvedAgent, Roster};
use crate::diag::{Code, Diagnostic};

/// One use of an agent by a phase (or a branch, judge, scorer).
#[derive(Clone, Debug, PartialEq)]
pub struct AgentUse {
    /// The phase using it.
    pub phase: String,
    /// The agent's name.
    pub agent: String,
    /// The phase's own `tools` (empty: none given, the agent's apply).
    pub tools: Vec<String>,
    /// Where the flow names the agent, when it does (the implicit `default` is not written).
    pub span: Option<crate::source::Span>,
}

/// The run-wide inputs of the preflight.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PreflightOptions {
    /// The effective caps (flow `budget`, overridden by `--max-usd`/`--max-tokens`).
    pub max_usd: Option<f64>,
    /// The effective token cap.
    pub max_tokens: Option<f64>,
    /// `--allow-writes` or `[safety] allow_unsandboxed_writes` (see
    /// [`ConfigRoster::allow_writes`](super::ConfigRoster::allow_writes)).
    pub allow_writes: bool,
    /// `--dry-run`: nothing is called, so nothing needs to report usage.
    pub dry_run: bool,
}

/// Check every use; diagnostics in the order of `uses`.
pub fn preflight(
    roster: &dyn Roster,
    uses: &[AgentUse],
    opts: &PreflightOptions,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen_agents: Vec<&str> = Vec::new();
    let mut seen: Vec<(Code, String)> = Vec::new();
    let mut once = |code: Code, key: String| {
        if seen.contains(&(code, key.clone())) {
            false
        } else {
            seen.push((code, key));
            true
        }
    };
    for u in uses {
        let before = out.len();
        'checks: {
            let first_use = !seen_agents.contains(&u.agent.as_str());
            if first_use {
                seen_agents.push(&u.agent);
            }
            let resolved = match roster.resolve(&u.agent) {
                Ok(r) => r,
                Err(e) => {
                    if first_use && !opts.dry_run {
                        let (message, help) = match e.split_once(". Fix: ") {
                            Some((m, h)) => (m.to_owned(), h.to_owned()),
                            None => (e, NO_BACKEND_FIXES.to_owned()),
                        };
                        out.push(
                            Diagnostic::new(Code::NoBackend, message)
                                .help(help)
                                .phase(u.phase.clone()),
                        );
                    }
                    break 'checks;
                }
            };
            let backend = &resolved.backend;
            let b = &resolved.backend_name;
            if first_use && !opts.dry_run && undefined_agent_matters(&u.agent, &resolved) {
                out.push(undefined_agent(u));
            }
            if !opts.dry_run {
                if let Some(cap) = opts.max_usd
                    && !backend.reports_cost()
                    && once(Code::BudgetUnmeterable, format!("usd {b}"))
                {
                    out.push(
                        Diagnostic::new(
                            Code::BudgetUnmeterable,
                            format!(
                                "budget maxUSD ${cap} cannot be enforced: backend '{b}' (agent '{}') reports no cost",
                                u.agent
                            ),
                        )
                        .help("use a backend that reports cost (claude, opencode, pi, or openai with `price`), or cap tokens with maxTokens instead")
                        .phase(u.phase.clone()),
                    );
                }
                if let Some(cap) = opts.max_tokens
                    && !backend.reports_tokens()
                    && once(Code::BudgetUnmeterable, format!("tokens {b}"))
                {
                    out.push(
                        Diagnostic::new(
                            Code::BudgetUnmeterable,
                            format!(
                                "budget maxTokens {cap} cannot be enforced: backend '{b}' (agent '{}') reports no token counts",
                                u.agent
                            ),
                        )
                        .help("use a backend that reports tokens, or remove maxTokens")
                        .phase(u.phase.clone()),
                    );
                }
            }
            let tools = if u.tools.is_empty() {
                &resolved.tools
            } else {
                &u.tools
            };
            if let ToolPolicy::Mutating(list) = ToolPolicy::from_tools(tools)
                && !backend.sandboxed()
                && !opts.allow_writes
                && once(Code::WritesNotAllowed, u.agent.clone())
            {
                out.push(
                    Diagnostic::new(
                        Code::WritesNotAllowed,
                        format!(
                            "agent '{}' may use tools that write ({}) on backend '{b}', which has no sandbox",
                            u.agent,
                            list.join(", ")
                        ),
                    )
                    .help("set `[safety] allow_unsandboxed_writes = true` in .tfc/config.toml or pass --allow-writes, or give the agent read-only tools")
                    .phase(u.phase.clone()),
                );
            }
            if !tools.is_empty()
                && !backend.supports_tools()
                && once(Code::ToolsUnsupported, u.agent.clone())
            {
                out.push(
                    Diagnostic::new(
                        Code::ToolsUnsupported,
                        format!(
                            "agent '{}' lists tools ({}) but backend '{b}' cannot use tools; they are ignored",
                            u.agent,
                            tools.join(", ")
                        ),
                    )
                    .phase(u.phase.clone()),
                );
            }
        }
        // Each problem points at where the flow names the agent (its first use).
        for d in &mut out[before..] {
            d.span = d.span.or(u.span);
        }
    }
    out
}

/// W0701 applies: no definition file, an agent the flow names, a backend that sends a
/// system prompt.
fn undefined_agent_matters(agent: &str, resolved: &ResolvedAgent) -> bool {
    !resolved.defined && agent != "default" && resolved.backend.uses_system_prompt()
}

/// W0701 for `u`, the first use of its agent.
fn undefined_agent(u: &AgentUse) -> Diagnostic {
    let mut d = Diagnostic::new(
        Code::UndefinedAgent,
        format!(
            "agent '{}' has no definition file; it runs with an empty system prompt",
            u.agent
        ),
    )
    .with_label("no definition file for this agent")
    .help(format!(
        "add .tfc/agents/{}.md (or the same file in the user config dir) with `name: {}` and `description:` frontmatter",
        u.agent, u.agent
    ))
    .phase(u.phase.clone());
    d.span = u.span;
    d
}

/// W0701 as `tfc check` reports it: each agent `tfc run` would warn about with the backends
/// the configuration chooses (`TFC_BACKEND`, project and user configuration), once, at its
/// first use. `resolve` answers only for configured choices (see
/// [`ConfigRoster::resolve_configured`](super::ConfigRoster::resolve_configured)); agents it
/// cannot answer for are not reported.
pub fn undefined_agents(
    resolve: impl Fn(&str) -> Option<ResolvedAgent>,
    uses: &[AgentUse],
) -> Vec<Diagnostic> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for u in uses {
        if seen.contains(&u.agent.as_str()) {
            continue;
        }
        seen.push(&u.agent);
        if let Some(resolved) = resolve(&u.agent)
            && undefined_agent_matters(&u.agent, &resolved)
        {
            out.push(undefined_agent(u));
        }
    }
    out
}

/// `tfc run`'s one line for every W0701 of a run (instead of one report per agent):
/// `warning[W0701]: agents without a definition file run with an empty system prompt: scout
/// (first used by 'a'), …`.
pub fn undefined_agents_line(diagnostics: &[Diagnostic]) -> Option<String> {
    let agents: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.code == Code::UndefinedAgent)
        .filter_map(|d| {
            let agent = d.message.strip_prefix("agent '")?.split('\'').next()?;
            Some(match &d.phase {
                Some(p) => format!("{agent} (first used by '{p}')"),
                None => agent.to_owned(),
            })
        })
        .collect();
    if agents.is_empty() {
        return None;
    }
    let (noun, verb, file) = if agents.len() == 1 {
        ("agent", "runs", ".tfc/agents/<name>.md")
    } else {
        ("agents", "run", ".tfc/agents/<name>.md for each")
    };
    Some(format!(
        "warning[W0701]: {noun} without a definition file {verb} with an empty system prompt: {}; add {file} (`name:` and `description:` frontmatter)",
        agents.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::call::{Agent, BoxFuture, Outcome, Request};
    use crate::agent::roster::ResolvedAgent;
    use crate::process::Cancel;
    use std::sync::Arc;

    struct Fake {
        cost: bool,
        tokens: bool,
        sandboxed: bool,
        tools: bool,
        system_prompt: bool,
    }
    impl Agent for Fake {
        fn name(&self) -> &str {
            "fake"
        }
        fn call<'a>(&'a self, _r: Request, _c: Cancel) -> BoxFuture<'a, Outcome> {
            Box::pin(async { Outcome::ok("") })
        }
        fn reports_cost(&self) -> bool {
            self.cost
        }
        fn reports_tokens(&self) -> bool {
            self.tokens
        }
        fn sandboxed(&self) -> bool {
            self.sandboxed
        }
        fn supports_tools(&self) -> bool {
            self.tools
        }
        fn uses_system_prompt(&self) -> bool {
            self.system_prompt
        }
    }

    /// Agents: `cli` (tokens+cost, unsandboxed, tools), `http` (tokens only, no tools),
    /// `bare` (nothing reported), `writer` (defined, with write tools); others missing.
    struct TestRoster;
    impl Roster for TestRoster {
        fn resolve(&self, agent: &str) -> Result<ResolvedAgent, String> {
            let (name, f, tools, defined) = match agent {
                "cli" | "default" => (
                    "cli",
                    Fake {
                        cost: true,
                        tokens: true,
                        sandboxed: false,
                        tools: true,
                        system_prompt: true,
                    },
                    vec![],
                    true,
                ),
                "writer" => (
                    "cli",
                    Fake {
                        cost: true,
                        tokens: true,
                        sandboxed: false,
                        tools: true,
                        system_prompt: true,
                    },
                    vec!["Read".into(), "Edit".into()],
                    true,
                ),
                "http" => (
                    "local",
                    Fake {
                        cost: false,
                        tokens: true,
                        sandboxed: true,
                        tools: false,
                        system_prompt: true,
                    },
                    vec!["read".into()],
                    true,
                ),
                "replayed" => (
                    "replay",
                    Fake {
                        cost: false,
                        tokens: false,
                        sandboxed: true,
                        tools: true,
                        system_prompt: false,
                    },
                    vec![],
                    false,
                ),
                "bare" => (
                    "mine",
                    Fake {
                        cost: false,
                        tokens: false,
                        sandboxed: false,
                        tools: true,
                        system_prompt: true,
                    },
                    vec![],
                    false,
                ),
                _ => {
                    return Err(format!(
                        "no backend for agent '{agent}'. Checked: stuff. Fix: do things"
                    ));
                }
            };
            Ok(ResolvedAgent {
                agent: agent.into(),
                backend_name: name.into(),
                backend: Arc::new(f),
                system_prompt: String::new(),
                model: None,
                thinking: None,
                tools,
                defined,
            })
        }
    }

    fn use_(phase: &str, agent: &str, tools: &[&str]) -> AgentUse {
        AgentUse {
            phase: phase.into(),
            agent: agent.into(),
            tools: tools.iter().map(|t| t.to_string()).collect(),
            span: None,
        }
    }

    fn codes(d: &[Diagnostic]) -> Vec<&str> {
        d.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn each_condition() {
        let uses = [
            use_("a", "ghost", &[]),
            use_("b", "ghost", &[]),
            use_("c", "bare", &[]),
            use_("d", "http", &[]),
            use_("e", "writer", &[]),
            use_("f", "cli", &["Bash"]),
            use_("g", "default", &[]),
        ];
        let opts = PreflightOptions {
            max_usd: Some(1.5),
            max_tokens: Some(1000.0),
            ..PreflightOptions::default()
        };
        let d = preflight(&TestRoster, &uses, &opts);
        assert_eq!(
            codes(&d),
            [
                "E0701", "W0701", "E0702", "E0702", "E0702", "W0702", "E0703", "E0703"
            ]
        );
        assert_eq!(d[0].message, "no backend for agent 'ghost'. Checked: stuff");
        assert_eq!(d[0].help.as_deref(), Some("do things"));
        assert_eq!(d[0].phase.as_deref(), Some("a"));
        assert!(d[2].message.contains("maxUSD $1.5") && d[2].message.contains("'mine'"));
        assert!(d[3].message.contains("maxTokens 1000") && d[3].message.contains("'mine'"));
        assert!(d[4].message.contains("maxUSD") && d[4].message.contains("'local'"));
        assert!(d[5].message.contains("lists tools (read)"));
        assert!(d[6].message.contains("(Read, Edit)") && d[6].phase.as_deref() == Some("e"));
        assert!(d[7].message.contains("(Bash)"));

        let allowed = PreflightOptions {
            allow_writes: true,
            dry_run: true,
            ..opts
        };
        let d = preflight(&TestRoster, &uses, &allowed);
        assert_eq!(codes(&d), ["W0702"]);
    }

    #[test]
    fn undefined_agents_matter_only_where_a_system_prompt_is_sent() {
        let at = crate::source::Span::new(3, 9);
        let uses = [
            use_("a", "replayed", &[]),
            AgentUse {
                span: Some(at),
                ..use_("b", "bare", &[])
            },
        ];
        let d = preflight(&TestRoster, &uses, &PreflightOptions::default());
        assert_eq!(codes(&d), ["W0701"]);
        assert!(d[0].message.contains("'bare'"), "{:?}", d[0]);
        assert_eq!(d[0].span, Some(at), "on the agent's name");
        let dry = PreflightOptions {
            dry_run: true,
            ..PreflightOptions::default()
        };
        assert!(preflight(&TestRoster, &uses, &dry).is_empty());
    }

    /// `tfc check` reports the same W0701 as the run would, from a resolver that answers only
    /// for configured choices; `tfc run` prints them all as one line.
    #[test]
    fn check_and_run_agree_and_the_run_says_it_once() {
        let uses = [
            use_("a", "bare", &[]),
            use_("b", "bare", &[]),
            use_("c", "replayed", &[]),
            use_("e", "default", &[]),
        ];
        let run = preflight(&TestRoster, &uses, &PreflightOptions::default());
        let run: Vec<_> = run
            .into_iter()
            .filter(|d| d.code == Code::UndefinedAgent)
            .collect();
        let check = undefined_agents(|agent| TestRoster.resolve(agent).ok(), &uses);
        assert_eq!(check, run);
        assert_eq!(codes(&check), ["W0701"]);
        assert_eq!(
            undefined_agents_line(&check).as_deref(),
            Some(
                "warning[W0701]: agent without a definition file runs with an empty system prompt: bare (first used by 'a'); add .tfc/agents/<name>.md (`name:` and `description:` frontmatter)"
            )
        );
        let two = [check[0].clone(), undefined_agent(&use_("d", "other", &[]))];
        assert_eq!(
            undefined_agents_line(&two).as_deref(),
            Some(
                "warning[W0701]: agents without a definition file run with an empty system prompt: bare (first used by 'a'), other (first used by 'd'); add .tfc/agents/<name>.md for each (`name:` and `description:` frontmatter)"
            )
        );
        // Nothing configured for an agent: nothing said.
        assert!(undefined_agents(|_| None, &uses).is_empty());
        assert_eq!(undefined_agents_line(&[]), None);
    }
}
