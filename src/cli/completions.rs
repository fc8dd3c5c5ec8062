//! `tfc completions SHELL`: the shell completion script for every command and option, from
//! the same clap definition the binary parses with (SPEC §19), printed to stdout.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, Exit};

#[derive(Args, Debug)]
#[command(after_help = "Install, e.g.:\n  \
    bash: tfc completions bash > ~/.local/share/bash-completion/completions/tfc\n  \
    zsh:  tfc completions zsh > \"${fpath[1]}/_tfc\"\n  \
    fish: tfc completions fish > ~/.config/fish/completions/tfc.fish\n  \
    PowerShell: tfc completions powershell | Out-String | Invoke-Expression\n  \
    elvish: eval (tfc completions elvish | slurp)")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `tfc completions SHELL`.
pub fn run(args: CompletionsArgs) -> Exit {
    let text = script(args.shell);
    super::print_out(text);
    Exit::Ok
}

/// The completion script for `shell`, completing the command `tfc`.
pub fn script(shell: Shell) -> String {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "tfc", &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}
