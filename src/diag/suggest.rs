//! Did-you-mean suggestions (SPEC §7.1): the nearest candidate by edit distance
//! ≤ max(1, len/3), case-insensitive equality first.

/// The best candidate for a misspelled `word`, if one is close enough.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let len = lower.chars().count();
    let limit = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for cand in candidates {
        if cand == word {
            continue;
        }
        // Lengths further apart than the limit cannot be close: skip without allocating, so a
        // flow full of unknown names stays fast.
        let clen = cand.chars().count();
        if clen.abs_diff(len) > limit {
            continue;
        }
        let cl = cand.to_lowercase();
        if cl == lower {
            return Some(cand);
        }
        let d = edit_distance(&lower, &cl);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance counting insertions, deletions, substitutions and swaps of two adjacent
/// characters (optimal string alignment), so `agnet` is one edit from `agent`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j - 1] + cost)
                .min(d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
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
        assert_eq!(edit_distance("agnet", "agent"), 1);
        assert_eq!(did_you_mean("agnet", ["agent", "gate"]), Some("agent"));
    }
}
