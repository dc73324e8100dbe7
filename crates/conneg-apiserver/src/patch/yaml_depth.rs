//! How deep a YAML document's flow collections (`[...]`, `{...}`) nest, found in one forward
//! pass over the bytes, before the YAML parser sees them.
//!
//! The parser under serde_norway (a port of libyaml) keeps one simple-key slot per open flow
//! collection and walks all of them for every token, so its cost is the number of tokens times
//! the flow depth: 100,000 nested `[` (200 KB) take about 20 s to be refused. Block nesting
//! (indentation, `- - -`) costs it nothing extra and is refused after parsing by the depth
//! checks in [`super`].
//!
//! The scan follows libyaml's tokenizer where it decides whether a `[` or `{` opens a
//! collection: comments, quoted scalars, plain scalars (which end at flow indicators only inside
//! a flow collection), anchors, aliases, tags, directives, block scalars and document markers.
//! Where it cannot be sure without the parser's indentation state, it errs towards counting: a
//! plain scalar in block context is taken to end at its line break, and a quoted scalar in block
//! context to end at the end of its line, so a bracket libyaml reads as text may be counted, but
//! a bracket libyaml reads as an opening is never skipped. Every index only moves forward: the
//! cost is linear in the body.

/// Whether a flow collection in `src` (UTF-8 YAML, without a byte-order mark) opens more than
/// `limit` levels deep.
pub(crate) fn flow_depth_exceeds(src: &[u8], limit: usize) -> bool {
    Scan {
        s: src,
        i: 0,
        line: 0,
        flow: 0,
        key_col: None,
        token_col: 0,
    }
    .exceeds(limit)
}

struct Scan<'a> {
    s: &'a [u8],
    /// The next byte; always at a token start in [`Scan::exceeds`].
    i: usize,
    /// Where the current line starts.
    line: usize,
    /// Open flow collections.
    flow: usize,
    /// Column of the last block-context key, `-` or `?`: the indentation of the block
    /// collection a block scalar belongs to (`None`: the document's top level).
    key_col: Option<usize>,
    /// Column where the last scalar or collection started (a key, if a `:` follows).
    token_col: usize,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

fn is_flow_indicator(b: u8) -> bool {
    matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

impl Scan<'_> {
    fn at(&self, i: usize) -> Option<u8> {
        self.s.get(i).copied()
    }

    /// Blank, line break or end of input at `i`.
    fn blankz(&self, i: usize) -> bool {
        self.at(i).is_none_or(|b| is_blank(b) || is_break(b))
    }

    /// `---` or `...` at the start of a line, followed by a blank: a document boundary. libyaml
    /// ends scalars there (or fails), and starts the next document in block context.
    fn doc_marker(&self, i: usize) -> bool {
        let Some(three) = self.s.get(i..i + 3) else {
            return false;
        };
        (three == b"---" || three == b"...") && self.blankz(i + 3)
    }

    /// The index of the line break (or end of input) ending the line that holds `i`.
    fn line_end(&self, i: usize) -> usize {
        self.s[i..]
            .iter()
            .position(|&b| is_break(b))
            .map_or(self.s.len(), |p| i + p)
    }

    fn exceeds(mut self, limit: usize) -> bool {
        while let Some(b) = self.at(self.i) {
            let col = self.i - self.line;
            let block = self.flow == 0;
            match b {
                _ if is_break(b) => {
                    self.i += 1;
                    self.line = self.i;
                }
                _ if is_blank(b) => self.i += 1,
                b'-' | b'.' if col == 0 && self.doc_marker(self.i) => {
                    // A new document starts in block context (or libyaml fails here).
                    self.flow = 0;
                    self.key_col = None;
                    self.i += 3;
                }
                b'#' => self.i = self.line_end(self.i),
                b'%' if block => self.i = self.line_end(self.i),
                b'[' | b'{' => {
                    if block {
                        self.token_col = col;
                    }
                    self.flow += 1;
                    if self.flow > limit {
                        return true;
                    }
                    self.i += 1;
                }
                b']' | b'}' => {
                    self.flow = self.flow.saturating_sub(1);
                    self.i += 1;
                }
                b',' if !block => self.i += 1,
                b'"' | b'\'' => {
                    self.token_col = col;
                    self.i = self.quoted_end(self.i + 1, b);
                }
                b'&' | b'*' => {
                    self.i += 1;
                    while self
                        .at(self.i)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
                    {
                        self.i += 1;
                    }
                }
                b'!' => {
                    // A tag: what may be in one differs between libyaml versions, so a `[` or
                    // `{` ends it (counted next) and a closing bracket is taken as part of it.
                    self.i += 1;
                    while self
                        .at(self.i)
                        .is_some_and(|c| !self.blankz(self.i) && c != b'[' && c != b'{')
                    {
                        self.i += 1;
                    }
                }
                b'-' | b'?' if self.blankz(self.i + 1) => {
                    if block {
                        self.key_col = Some(col);
                    }
                    self.i += 1;
                }
                b':' if !block || self.blankz(self.i + 1) => {
                    if block {
                        self.key_col = Some(self.token_col);
                    }
                    self.i += 1;
                }
                b'|' | b'>' if block => {
                    self.i = self.block_scalar_end(self.i);
                    if self.i > 0 && self.at(self.i - 1).is_some_and(is_break) {
                        self.line = self.i;
                    }
                }
                _ => {
                    self.token_col = col;
                    self.i = self.plain_end(self.i);
                }
            }
        }
        false
    }

    /// The end of a quoted scalar whose content starts at `i`: after its closing quote, at a
    /// document marker, or (in block context) at the end of the line.
    fn quoted_end(&self, mut i: usize, quote: u8) -> usize {
        while let Some(c) = self.at(i) {
            if quote == b'"' && c == b'\\' {
                i += 2;
            } else if c == quote {
                if quote == b'\'' && self.at(i + 1) == Some(b'\'') {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else if is_break(c) {
                if self.flow == 0 || self.doc_marker(i + 1) {
                    return i;
                }
                i += 1;
            } else {
                i += 1;
            }
        }
        self.s.len()
    }

    /// The end of a plain scalar starting at `i` (its first byte is not an indicator that
    /// starts another token). In a flow collection it ends at a flow indicator, `: `, ` #` or
    /// a document marker and may span lines; in block context it ends at `: `, ` #` or the
    /// line break.
    fn plain_end(&self, mut i: usize) -> usize {
        let flow = self.flow > 0;
        i += 1;
        loop {
            while let Some(c) = self.at(i) {
                if is_blank(c) || is_break(c) {
                    break;
                }
                let next_ends =
                    self.blankz(i + 1) || (flow && self.at(i + 1).is_some_and(is_flow_indicator));
                if (c == b':' && next_ends) || (flow && is_flow_indicator(c)) {
                    return i;
                }
                i += 1;
            }
            let white = i;
            let mut broke = false;
            let mut line = None;
            while let Some(c) = self.at(i).filter(|&c| is_blank(c) || is_break(c)) {
                i += 1;
                if is_break(c) {
                    broke = true;
                    line = Some(i);
                }
            }
            let doc = line.is_some_and(|l| l == i && self.doc_marker(i));
            if i >= self.s.len() || (broke && !flow) || doc || self.at(i) == Some(b'#') {
                return white;
            }
        }
    }

    /// The end of a block scalar (`|` or `>`) whose header starts at `i`: the start of the
    /// first line that is not part of its content. With an explicit indentation indicator
    /// only the header is skipped (the content is then scanned as YAML, which can only count
    /// more).
    fn block_scalar_end(&self, i: usize) -> usize {
        let header_end = self.line_end(i);
        if self.s[i..header_end].iter().take(3).any(u8::is_ascii_digit) {
            return header_end;
        }
        let mut content_indent = None;
        let mut line = header_end;
        while let Some(&c) = self.s.get(line) {
            // `line` is at a line break: step over it to the next line's start.
            line += 1;
            if c == b'\r' && self.at(line) == Some(b'\n') {
                line += 1;
            }
            let indent = self.s[line..].iter().take_while(|&&b| b == b' ').count();
            match self.at(line + indent) {
                None => return self.s.len(),
                Some(b) if is_break(b) => {
                    line += indent;
                    continue;
                }
                Some(_) => {}
            }
            let ci = *content_indent.get_or_insert(indent);
            let parent_owns = self.key_col.is_some_and(|k| indent <= k);
            if indent < ci || parent_owns || (indent == 0 && self.doc_marker(line)) {
                return line;
            }
            line = self.line_end(line);
        }
        self.s.len()
    }
}

#[cfg(test)]
mod tests {
    use super::flow_depth_exceeds;

    fn exceeds(s: &str) -> bool {
        flow_depth_exceeds(s.as_bytes(), 3)
    }

    #[test]
    fn counts_flow_collections() {
        assert!(!exceeds("a: [[[1]]]\n"));
        assert!(exceeds("a: [[[[1]]]]\n"));
        assert!(exceeds("{a: {b: {c: {d: 1}}}}"));
        assert!(!exceeds("[[[1]]]\n[[[2]]]\n"));
        assert!(exceeds(&"[".repeat(100_000)));
    }

    #[test]
    fn text_is_not_nesting() {
        // Brackets inside scalars and comments are text.
        assert!(!exceeds("a: \"[[[[[\"\nb: '{{{{'\nc: x[[[[[\n# [[[[[[\n"));
        assert!(!exceeds("a: [\"]]]]\", '[[[[[', x]]]]]]]]]]]]\n"));
        assert!(!exceeds("a: |\n  [[[[[[\n  {{{{{\nb: 1\n"));
        assert!(!exceeds("- a: >-\n    [[[[[[\n- b\n"));
        assert!(!exceeds("a: ['it''s [[[[', \"\\\"[[[[\"]\n"));
    }

    #[test]
    fn openings_are_never_skipped() {
        // Each of these hides deep nesting from a scanner that skips too much.
        let deep = "[".repeat(10);
        for case in [
            // A quote inside a plain scalar in a flow collection is text, not a string start.
            format!("[a \"{deep}\"]"),
            // A quote on a plain scalar's continuation line in block context.
            format!("k: a\n \"x\ny: {deep}\n"),
            // A block scalar ends where the next key is.
            format!("- a: |\n    \"\n  b: {deep}\n"),
            format!("a: |\n  \"\nb: {deep}\n"),
            // A top-level block scalar ends at the next document.
            format!("--- |\n  [\"\n---\n{deep}\n"),
            // Anchors, aliases and tags end before a flow indicator.
            format!("a: &x{deep}"),
            format!("a: !t]]]]]]]]]]]] {deep}"),
            // Closing brackets inside a string close nothing.
            format!("{deep}\"]]]]]]]]]]]\""),
        ] {
            assert!(exceeds(&case), "not refused: {case:?}");
        }
    }
}
