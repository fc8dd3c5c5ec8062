//! Allowed warnings, ruff-style: `--allow CODE` (repeatable) on `tfc check` and `tfc run`,
//! and `"lint": {"allow": ["W0102"]}` in a flow. A warning is named by its code (`W0102`,
//! any case) or its name (`gate-sole-path`). Errors cannot be allowed: a flow with an error
//! does not run, whatever a flag says.

use super::codes::Code;
use super::suggest::did_you_mean;

/// Why a name cannot be allowed: the message, and a help line saying what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAllowable {
    /// What is wrong with the name.
    pub message: String,
    /// What to write instead.
    pub help: String,
}

/// The warning `text` names.
pub fn allowable(text: &str) -> Result<Code, NotAllowable> {
    let found = Code::ALL
        .iter()
        .copied()
        .find(|c| c.as_str().eq_ignore_ascii_case(text) || c.name() == text);
    match found {
        Some(code) if code.is_warning() => Ok(code),
        Some(code) => Err(NotAllowable {
            message: format!(
                "{} ({}) is an error: errors cannot be allowed, only warnings",
                code.as_str(),
                code.name()
            ),
            help: "fix the error instead".to_owned(),
        }),
        None => {
            let warnings = Code::ALL.iter().filter(|c| c.is_warning());
            let candidates = warnings.flat_map(|c| [c.as_str(), c.name()]);
            let help = match did_you_mean(text, candidates) {
                Some(near) => format!("did you mean '{near}'?"),
                None => "name a warning by its code (W0102) or its name (gate-sole-path), as `tfc check` prints them".to_owned(),
            };
            Err(NotAllowable {
                message: format!("'{text}' is not a warning code or name"),
                help,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_of_warnings_only() {
        assert_eq!(allowable("W0102"), Ok(Code::GateSolePath));
        assert_eq!(allowable("w0102"), Ok(Code::GateSolePath));
        assert_eq!(allowable("gate-sole-path"), Ok(Code::GateSolePath));
        let e = allowable("E0103").unwrap_err();
        assert!(e.message.contains("errors cannot be allowed"), "{e:?}");
        assert!(allowable("unknown-dependency").is_err());
        assert_eq!(
            allowable("W0120").unwrap_err().help,
            "did you mean 'W0102'?"
        );
        assert_eq!(
            allowable("gate-sole-pth").unwrap_err().help,
            "did you mean 'gate-sole-path'?"
        );
        assert!(
            allowable("zzz")
                .unwrap_err()
                .help
                .starts_with("name a warning")
        );
    }
}
