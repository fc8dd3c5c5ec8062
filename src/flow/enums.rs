//! Every closed set of words a flow file can hold, each declared once.
//!
//! [`words!`] declares an enum together with its spellings: `ALL` (declaration order),
//! `NAMES` (the same order, as written in a file), `as_str` and `parse`. Lowering parses with
//! it (and builds its "one of …" and did-you-mean help from `NAMES`), the field tables of
//! `fields.rs` take their allowed values from `NAMES`, and so does `tfc schema`: a word added
//! here is accepted, suggested and documented everywhere, and every exhaustive `match` on the
//! enum points at the code that must handle it.

/// A closed set of words (see the module docs).
pub trait Words: Copy + Eq + 'static {
    /// Every value, in declaration order.
    const ALL: &'static [Self];
    /// The spellings of `ALL`, in the same order.
    const NAMES: &'static [&'static str];
    /// How the value is written in a flow file.
    fn as_str(self) -> &'static str;
    /// The value spelt `s`.
    fn parse(s: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Self::ALL[i])
    }
}

/// Declare a [`Words`] enum: `words! { /// doc  pub enum Join { /// doc  All = "all", … } }`.
/// Put `#[default]` on a variant to derive `Default`.
macro_rules! words {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $spelling:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The spellings of `ALL`, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($spelling),+];

            /// How the value is written in a flow file.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $spelling),+
                }
            }

            /// The value spelt `s`.
            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($spelling => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl $crate::flow::enums::Words for $name {
            const ALL: &'static [$name] = $name::ALL;
            const NAMES: &'static [&'static str] = $name::NAMES;
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
            fn parse(s: &str) -> Option<$name> {
                $name::parse(s)
            }
        }
    };
}

#[allow(unused_imports)]
pub(crate) use words;

words! {
    /// The twelve phase kinds (SPEC §3). Each has its file under `flow/kinds/`.
    pub enum PhaseType {
        /// One agent call (§3.2).
        Agent = "agent",
        /// Several branches at once (§3.3).
        Parallel = "parallel",
        /// One call per element of an array (§3.4).
        Map = "map",
        /// A verdict on upstream work (§3.5).
        Gate = "gate",
        /// Many outputs combined into one (§3.6).
        Reduce = "reduce",
        /// A person's decision (§3.7).
        Approval = "approval",
        /// A sub-flow (§3.8).
        Flow = "flow",
        /// A repeated call until a condition holds (§3.9).
        Loop = "loop",
        /// Competing variants and a judge (§3.10).
        Tournament = "tournament",
        /// A command (§3.11).
        Script = "script",
        /// The first branch to finish (§3.12).
        Race = "race",
        /// Phases generated at run time (§3.13).
        Expand = "expand",
    }
}

impl PhaseType {
    /// Types that run agents and so have an idle watchdog (SPEC §3.1 `idleTimeout`).
    pub fn runs_agents(self) -> bool {
        match self {
            PhaseType::Agent
            | PhaseType::Gate
            | PhaseType::Reduce
            | PhaseType::Map
            | PhaseType::Parallel
            | PhaseType::Loop
            | PhaseType::Tournament
            | PhaseType::Race => true,
            PhaseType::Approval | PhaseType::Flow | PhaseType::Script | PhaseType::Expand => false,
        }
    }

    /// Types that use the common `task` field (elsewhere it draws W0308).
    pub fn reads_task(self) -> bool {
        match self {
            PhaseType::Agent
            | PhaseType::Map
            | PhaseType::Gate
            | PhaseType::Reduce
            | PhaseType::Approval
            | PhaseType::Loop
            | PhaseType::Tournament => true,
            PhaseType::Parallel
            | PhaseType::Flow
            | PhaseType::Script
            | PhaseType::Race
            | PhaseType::Expand => false,
        }
    }

    /// `a gate`, `an agent`: the type with its article, for messages.
    pub fn with_article(self) -> String {
        let t = self.as_str();
        let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {t}")
    }
}

words! {
    /// `join` (SPEC §8.2).
    #[derive(Default)]
    pub enum Join {
        /// Every dependency must be satisfied.
        #[default]
        All = "all",
        /// The first satisfied dependency is enough.
        Any = "any",
    }
}

words! {
    /// `output` (SPEC §3.1).
    #[derive(Default)]
    pub enum OutputMode {
        /// The output is text.
        #[default]
        Text = "text",
        /// The output is also safeParsed into `json`.
        Json = "json",
    }
}

words! {
    /// A gate's `onBlock` (SPEC §3.5).
    #[derive(Default)]
    pub enum OnBlock {
        /// A block halts the flow.
        #[default]
        Halt = "halt",
        /// A block re-runs the dependencies and the gate.
        Retry = "retry",
    }
}

words! {
    /// An approval's `onTimeout` (SPEC §8.8): what its deadline decides.
    #[derive(Default)]
    pub enum OnTimeout {
        /// The deadline rejects.
        #[default]
        Reject = "reject",
        /// The deadline approves.
        Approve = "approve",
        /// The deadline fails the phase (decision `expired`).
        Fail = "fail",
    }
}

words! {
    /// A reduce's `reduceStrategy` (SPEC §3.6).
    #[derive(Default)]
    pub enum ReduceStrategy {
        /// One call over every input.
        #[default]
        OneShot = "one-shot",
        /// Batched rounds.
        Tree = "tree",
    }
}

words! {
    /// A tournament's `mode` (SPEC §3.10).
    #[derive(Default)]
    pub enum TournamentMode {
        /// The judge picks the best variant.
        #[default]
        Best = "best",
        /// The judge synthesises the variants.
        Aggregate = "aggregate",
    }
}

words! {
    /// An expand's `expandMode` (SPEC §3.13).
    #[derive(Default)]
    pub enum ExpandMode {
        /// The fragment runs as a nested flow.
        #[default]
        Nested = "nested",
        /// The fragment's phases are grafted into the running flow.
        Graft = "graft",
    }
}

words! {
    /// `cache.scope` (SPEC §10.5).
    pub enum CacheScope {
        /// Reuse within one run.
        RunOnly = "run-only",
        /// Reuse across runs.
        CrossRun = "cross-run",
        /// No reuse.
        Off = "off",
    }
}

words! {
    /// `score.combine` (SPEC §3.14).
    #[derive(Default)]
    pub enum Combine {
        /// Every scorer passes.
        #[default]
        All = "all",
        /// One scorer passes.
        Any = "any",
        /// The weighted mean reaches the threshold.
        Weighted = "weighted",
    }
}

words! {
    /// A scorer's `type` (SPEC §3.14).
    pub enum ScorerType {
        /// The target equals `value`.
        ExactMatch = "exact-match",
        /// The target contains `value`.
        Contains = "contains",
        /// The target matches `pattern`.
        Regex = "regex",
        /// The target's JSON satisfies `schema`.
        JsonSchema = "json-schema",
        /// The target's length lies in `min..=max`.
        LengthRange = "length-range",
        /// The target compiles as `language`.
        CodeCompiles = "code-compiles",
    }
}

impl ScorerType {
    /// The fields this scorer type takes besides `type` and `name`.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            ScorerType::ExactMatch | ScorerType::Contains => &["value"],
            ScorerType::Regex => &["pattern", "negate"],
            ScorerType::JsonSchema => &["schema"],
            ScorerType::LengthRange => &["min", "max"],
            ScorerType::CodeCompiles => &["language"],
        }
    }
}

words! {
    /// A code-compiles scorer's `language`.
    pub enum CodeLanguage {
        /// JavaScript.
        Javascript = "javascript",
        /// TypeScript.
        Typescript = "typescript",
    }
}

words! {
    /// An argument's `type` (SPEC §2.2).
    pub enum ArgType {
        /// Any string.
        String = "string",
        /// A path inside the project.
        RelativePath = "relative-path",
        /// A number within `minimum..=maximum`.
        Number = "number",
        /// true or false.
        Boolean = "boolean",
        /// One of `values`.
        Enum = "enum",
    }
}

words! {
    /// The flow's `agentScope` (SPEC §2.1).
    #[derive(Default)]
    pub enum AgentScope {
        /// User agent definitions only.
        User = "user",
        /// Project agent definitions only.
        Project = "project",
        /// Both.
        #[default]
        Both = "both",
    }
}

words! {
    /// A phase's `thinking` (SPEC §3.1).
    pub enum Thinking {
        /// No reasoning.
        Off = "off",
        /// No reasoning.
        None = "none",
        /// Minimal effort.
        Minimal = "minimal",
        /// Low effort.
        Low = "low",
        /// Medium effort.
        Medium = "medium",
        /// High effort.
        High = "high",
        /// Extra-high effort.
        Xhigh = "xhigh",
        /// Maximum effort.
        Max = "max",
        /// Beyond maximum, where the backend has it.
        Ultra = "ultra",
    }
}

words! {
    /// The keyword forms of a phase's `cwd` (SPEC §3.1); any other text is a path or one
    /// whole `{args.X}`.
    pub enum CwdKeyword {
        /// A fresh temporary directory, removed after.
        Temp = "temp",
        /// `.tfc/work/<runId>/<phaseId>/`.
        Dedicated = "dedicated",
        /// A detached git worktree under `.tfc/worktrees/`.
        Worktree = "worktree",
    }
}

words! {
    /// The JSON types of an `expect` contract (SPEC §3.15).
    pub enum ContractType {
        /// An object.
        Object = "object",
        /// An array.
        Array = "array",
        /// A string.
        String = "string",
        /// A number.
        Number = "number",
        /// An integral number.
        Integer = "integer",
        /// true or false.
        Boolean = "boolean",
        /// null.
        Null = "null",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_to_their_values() {
        fn round_trip<W: Words + std::fmt::Debug>() {
            assert_eq!(W::ALL.len(), W::NAMES.len());
            for (v, n) in W::ALL.iter().zip(W::NAMES) {
                assert_eq!(v.as_str(), *n);
                assert_eq!(W::parse(n), Some(*v));
            }
            assert_eq!(W::parse("no-such-word"), None);
        }
        round_trip::<PhaseType>();
        round_trip::<Join>();
        round_trip::<OutputMode>();
        round_trip::<OnBlock>();
        round_trip::<ReduceStrategy>();
        round_trip::<TournamentMode>();
        round_trip::<ExpandMode>();
        round_trip::<CacheScope>();
        round_trip::<Combine>();
        round_trip::<ScorerType>();
        round_trip::<CodeLanguage>();
        round_trip::<ArgType>();
        round_trip::<AgentScope>();
        round_trip::<Thinking>();
        round_trip::<ContractType>();
        round_trip::<CwdKeyword>();
    }

    #[test]
    fn articles() {
        assert_eq!(PhaseType::Agent.with_article(), "an agent");
        assert_eq!(PhaseType::Gate.with_article(), "a gate");
        assert_eq!(PhaseType::Expand.with_article(), "an expand");
    }
}
