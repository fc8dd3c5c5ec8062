//! The stable diagnostic codes of `tfc check` and `tfc run` (SPEC §7.2, §7.4).
//!
//! Codes never change meaning once released; a new condition gets a new code.

macro_rules! codes {
    ($($variant:ident = $code:literal $name:literal,)*) => {
        /// A stable diagnostic code with its short kebab-case name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code {
            $(#[doc = concat!("`", $code, "` (", $name, ")")] $variant,)*
        }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code itself, e.g. `E0103`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// The short kebab-case name, e.g. `unknown-dependency`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }
        }
    };
}

codes! {
    CannotRead = "E0000" "cannot-read",
    JsonSyntax = "E0001" "json-syntax",
    DuplicateKey = "E0002" "duplicate-key",
    UnknownField = "E0003" "unknown-field",
    WrongType = "E0004" "wrong-type",
    InvalidValue = "E0005" "invalid-value",
    NotAFlow = "E0006" "not-a-flow",
    NoPhases = "E0101" "no-phases",
    DuplicatePhaseId = "E0102" "duplicate-phase-id",
    UnknownDependency = "E0103" "unknown-dependency",
    DependencyCycle = "E0104" "dependency-cycle",
    SelfDependency = "E0105" "self-dependency",
    MultipleFinal = "E0106" "multiple-final",
    DisconnectedPhase = "E0107" "disconnected-phase",
    InvalidName = "E0108" "invalid-name",
    MissingId = "E0109" "missing-id",
    UnderscoreId = "E0110" "underscore-id",
    UnknownType = "E0111" "unknown-type",
    InvalidAgentName = "E0112" "invalid-agent-name",
    UnreachableReference = "E0201" "unreachable-reference",
    UnknownReference = "E0202" "unknown-reference",
    SelfReference = "E0203" "self-reference",
    MapOverLiteral = "E0204" "map-over-literal",
    ScriptPlaceholder = "E0205" "script-placeholder",
    OutputSubpath = "E0206" "output-subpath",
    InvalidLocalName = "E0207" "invalid-local-name",
    UnknownStepField = "E0208" "unknown-step-field",
    UnresolvablePath = "E0209" "unresolvable-path",
    OverNotArray = "E0211" "over-not-array",
    ComparisonOutsideType = "E0212" "comparison-outside-type",
    MissingField = "E0301" "missing-field",
    FieldNotAllowed = "E0302" "field-not-allowed",
    ConflictingFields = "E0303" "conflicting-fields",
    TooFewBranches = "E0304" "too-few-branches",
    UnknownSubflow = "E0305" "unknown-subflow",
    InvalidSubflow = "E0306" "invalid-subflow",
    TreeReduceCap = "E0307" "tree-reduce-cap",
    InvalidDef = "E0308" "invalid-def",
    InvalidRetry = "E0401" "invalid-retry",
    InvalidTimeout = "E0402" "invalid-timeout",
    InvalidIdleTimeout = "E0403" "invalid-idle-timeout",
    UnboundedPhase = "E0404" "unbounded-phase",
    InvalidCache = "E0405" "invalid-cache",
    CrossRunNotAllowed = "E0406" "cross-run-not-allowed",
    InvalidContract = "E0407" "invalid-contract",
    ExpectNeedsJson = "E0408" "expect-needs-json",
    InvalidScore = "E0409" "invalid-score",
    InvalidCwd = "E0410" "invalid-cwd",
    InvalidArgSpec = "E0501" "invalid-arg-spec",
    InvalidArgValue = "E0502" "invalid-arg-value",
    MissingArg = "E0503" "missing-arg",
    UnknownArg = "E0504" "unknown-arg",
    DynamicTooManyPhases = "E0601" "dynamic-limit",
    DynamicConcurrency = "E0602" "dynamic-limit",
    DynamicForbiddenFeature = "E0603" "dynamic-limit",
    DynamicNesting = "E0604" "dynamic-limit",
    NoBackend = "E0701" "no-backend",
    BudgetUnmeterable = "E0702" "budget-unmeterable",
    WritesNotAllowed = "E0703" "writes-not-allowed",
    DeadEnd = "W0101" "dead-end",
    GateSolePath = "W0102" "gate-sole-path",
    BudgetBelowMinimum = "W0103" "budget-below-minimum",
    BranchesExceedConcurrency = "W0104" "branches-exceed-concurrency",
    OpposingGuards = "W0105" "opposing-guards",
    ContractMissingProperty = "W0106" "contract-missing-property",
    OverUnwrappedObject = "W0107" "over-unwrapped-object",
    ComparesAsText = "W0108" "compares-as-text",
    FinalGuarded = "W0109" "final-guarded",
    JoinAnyUnfinishedRead = "W0110" "join-any-unfinished-read",
    ConditionParseError = "W0201" "condition-parse-error",
    ArgNotProvided = "W0202" "arg-not-provided",
    UndeclaredArg = "W0203" "undeclared-arg",
    LegacyRequiredArg = "W0204" "legacy-required-arg",
    UnreferenceableId = "W0205" "unreferenceable-id",
    LocalOutOfScope = "W0206" "local-out-of-scope",
    UnknownPlaceholder = "W0207" "unknown-placeholder",
    EvalAndScore = "W0301" "eval-and-score",
    LoopOnlyField = "W0302" "loop-only-field",
    IdempotentNoOp = "W0303" "idempotent-no-op",
    IdempotentOverridesCache = "W0304" "idempotent-overrides-cache",
    IdempotentIncremental = "W0305" "idempotent-incremental",
    BatchsizeIgnored = "W0306" "batchsize-ignored",
    IdleTimeoutIgnored = "W0307" "idle-timeout-ignored",
    FieldIgnored = "W0308" "field-ignored",
    EmptyBudget = "W0309" "empty-budget",
    CwdMismatch = "W0310" "cwd-mismatch",
    FactorIgnored = "W0311" "factor-ignored",
    ScriptPipefail = "W0312" "script-pipefail",
    ShellPlaceholder = "W0313" "shell-placeholder",
    HookCommandPlaceholder = "W0314" "hook-command-placeholder",
    SubflowHooks = "W0315" "subflow-hooks",
    UndefinedAgent = "W0701" "undefined-agent",
    ToolsUnsupported = "W0702" "tools-unsupported",
    // Test files (`*.test.json`, SPEC §17): T0001–T0499 errors, T0500–T0999 warnings.
    TestUnknownKey = "T0001" "test-unknown-key",
    TestWrongType = "T0002" "test-wrong-type",
    TestFlowNotFound = "T0003" "test-flow-not-found",
    TestInvalidPattern = "T0004" "test-invalid-pattern",
    TestUnknownNode = "T0005" "test-unknown-node",
    TestNoSuchInstance = "T0006" "test-no-such-instance",
    TestNotAnApproval = "T0007" "test-not-an-approval",
    TestImpossibleExpectation = "T0008" "test-impossible-expectation",
    TestInvalidMatcher = "T0009" "test-invalid-matcher",
    TestDuplicateName = "T0010" "test-duplicate-name",
    TestAnswerKind = "T0011" "test-answer-kind",
    TestPatternMayMatchNothing = "T0501" "test-pattern-may-match-nothing",
    TestAnswerViolatesContract = "T0502" "test-answer-violates-contract",
    // `tfc test --coverage` (SPEC §17 "Coverage"): T0900 on; informs, never fails a test.
    TestOutcomeNotReached = "T0900" "test-outcome-not-reached",
}

impl Code {
    /// Warnings start with `W`, errors with `E`; test-file codes (`T`) are warnings from
    /// `T0500` on.
    pub(crate) fn is_warning(self) -> bool {
        let s = self.as_str();
        s.starts_with('W') || (s.starts_with('T') && s[1..] >= *"0500")
    }

    /// Warnings that strict mode (SPEC §7.3) also reports as errors: every `W02xx`/`W03xx`
    /// (field and interpolation warnings), never the `W01xx` graph lints.
    pub(crate) fn is_strict_promotable(self) -> bool {
        let s = self.as_str();
        s.starts_with("W02") || s.starts_with("W03")
    }

    /// Look a code up by its text (`E0103`).
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert_eq!(s.len(), 5);
            assert!(s.starts_with('E') || s.starts_with('W') || s.starts_with('T'));
            if let Some(n) = s.strip_prefix('T') {
                assert_eq!(code.is_warning(), n >= "0500", "{s}");
            }
            assert!(
                code.name()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-')
            );
            assert_eq!(Code::parse(s), Some(*code));
        }
    }
}
