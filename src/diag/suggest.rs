//! Did-you-mean suggestions (SPEC §7.1): the nearest candidate by edit distance
//! ≤ max(1, len/3), case-insensitive equality first.

/// The best candidate for a misspelled `word`, if one is close enough.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for cand in candidates {
        if cand == word {
            continue;
        }
        if cand.to_lowercase() == lower {
            return Some(cand);
        }
        let d = edit_distance(&lower, &cand.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over chars, with one row of memory.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_names() {
        let fields = ["dependsOn", "task", "type", "when"];
        assert_eq!(did_you_mean("dependOn", fields), Some("dependsOn"));
        assert_eq!(did_you_mean("DEPENDSON", fields), Some("dependsOn"));
        assert_eq!(did_you_mean("tsk", fields), Some("task"));
        assert_eq!(did_you_mean("zzzzzz", fields), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
