//! Template tokens. Longest match makes `{a}` a placeholder and `{{a}}` a brace then `{a}`.

use logos::Logos;

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// `{head.seg…}`: a placeholder.
    #[regex(r"\{[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*\}")]
    Placeholder,
    /// A `{` that does not start a placeholder.
    #[token("{")]
    Brace,
    /// A run of text without `{`.
    #[regex(r"[^{]+")]
    Text,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(s: &str) -> Vec<(Token, &str)> {
        let mut lx = Token::lexer(s);
        let mut out = Vec::new();
        while let Some(t) = lx.next() {
            out.push((t.expect("every byte is a token"), lx.slice()));
        }
        out
    }

    #[test]
    fn tokens_follow_the_regex() {
        use Token::*;
        assert_eq!(lex("{{a}}"), [(Brace, "{"), (Placeholder, "{a}"), (Text, "}")]);
        assert_eq!(lex("{a.}"), [(Brace, "{"), (Text, "a.}")]);
        assert_eq!(lex("{a.b-c_1}x"), [(Placeholder, "{a.b-c_1}"), (Text, "x")]);
        assert_eq!(lex("{ a }"), [(Brace, "{"), (Text, " a }")]);
        assert_eq!(lex("{"), [(Brace, "{")]);
        assert_eq!(lex("{a"), [(Brace, "{"), (Text, "a")]);
        assert_eq!(lex("é{x}"), [(Text, "é"), (Placeholder, "{x}")]);
        assert_eq!(lex("{.a}"), [(Brace, "{"), (Text, ".a}")]);
        assert_eq!(lex("{a..b}"), [(Brace, "{"), (Text, "a..b}")]);
    }
}
