//! The JSONPath of printer columns (`additionalPrinterColumns[].jsonPath`), evaluated as
//! client-go's `jsonpath` package does with missing keys allowed, and the Table cells made
//! from its results.
//!
//! The forms CRDs use are supported: fields (`.spec.replicas`), keys with dots
//! (`.metadata.labels['app.kubernetes.io/name']`, or with `"`), indices (`[0]`, `[-1]`),
//! slices (`[0:2]`), wildcards (`[*]`, `.*`) and filters on list items
//! (`.status.conditions[?(@.type=="Ready")].status`, also `!=`, `<`, `<=`, `>`, `>=`, and
//! `[?(@.field)]` for presence). Recursive descent (`..`), unions (`[0,1]`) and templates
//! with text or `range` are not; [`JsonPath::parse`] rejects them with a message saying so.
//!
//! Missing keys, a field of a non-object, an index out of range and a comparison of
//! incompatible values all give no result, which a Table shows as `null` (kubectl prints
//! `<none>`). Work is bounded: a path has at most [`MAX_PATH_LEN`] bytes and
//! [`MAX_SEGMENTS`] steps (filters included), and each step visits each node of the object at
//! most once.

use std::fmt;

use serde_json::Value;

/// The longest path accepted, in bytes.
pub(crate) const MAX_PATH_LEN: usize = 512;
/// The most steps (fields, indices, wildcards, filters, and the steps inside filters).
pub(crate) const MAX_SEGMENTS: usize = 32;

/// Why a path does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError(String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(msg.into()))
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `.name` or `['name']`: the member of an object.
    Field(String),
    /// `.*` or `[*]`: every member of an object or item of a list.
    Wildcard,
    /// `[n]`; negative counts from the end.
    Index(i64),
    /// `[start:end:step]`.
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// `[?(...)]`: the items of a list that pass.
    Filter(Box<Filter>),
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    left: Operand,
    /// `None`: the left path must exist.
    compare: Option<(Op, Operand)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Operand {
    /// `@...`: a path from the list item.
    Current(Vec<Step>),
    Literal(Literal),
}

#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses `path`, with or without client-go's surrounding `{}`, optionally starting with
    /// `$`.
    pub(crate) fn parse(path: &str) -> Result<Self, ParseError> {
        if path.len() > MAX_PATH_LEN {
            return err(format!("must be at most {MAX_PATH_LEN} bytes"));
        }
        let mut inner = path.trim();
        if let Some(rest) = inner.strip_prefix('{') {
            match rest.strip_suffix('}') {
                Some(body) => inner = body.trim(),
                None => return err("unclosed action: missing '}'"),
            }
        }
        if inner.is_empty() {
            return err("must not be empty");
        }
        let mut p = Parser {
            s: inner.as_bytes(),
            src: inner,
            at: 0,
            count: 0,
        };
        if p.peek() == Some(b'$') {
            p.at += 1;
        }
        if p.at < p.s.len() && !matches!(p.peek(), Some(b'.' | b'[')) {
            return err(format!(
                "must start with '.' or '[', found {:?}",
                p.rest_char()
            ));
        }
        let steps = p.steps(false)?;
        if p.at != p.s.len() {
            return err(format!("unexpected {:?} at byte {}", p.rest_char(), p.at));
        }
        Ok(Self { steps })
    }

    /// Every result, in order (client-go's `FindResults` for one expression). A `null`
    /// member is a result (`Value::Null`); a missing one is not.
    pub(crate) fn find<'a>(&self, obj: &'a Value) -> Vec<&'a Value> {
        eval(&self.steps, vec![obj]).unwrap_or_default()
    }

    /// The first result: what a Table cell shows (the server uses only `results[0][0]`, so
    /// `.spec.items[*].name` shows the first name there).
    pub(crate) fn first<'a>(&self, obj: &'a Value) -> Option<&'a Value> {
        self.find(obj).into_iter().next()
    }
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    at: usize,
    count: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn rest_char(&self) -> String {
        self.src[self.at..]
            .chars()
            .next()
            .map(String::from)
            .unwrap_or_default()
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    fn push(&mut self, steps: &mut Vec<Step>, step: Step) -> Result<(), ParseError> {
        self.count += 1;
        if self.count > MAX_SEGMENTS {
            return err(format!("must have at most {MAX_SEGMENTS} segments"));
        }
        steps.push(step);
        Ok(())
    }

    /// Steps until the end, or (inside a filter) until a byte that ends an operand.
    fn steps(&mut self, in_filter: bool) -> Result<Vec<Step>, ParseError> {
        let mut steps = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                b'.' => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'.') => return err("recursive descent (..) is not supported"),
                        Some(b'*') => {
                            self.at += 1;
                            self.push(&mut steps, Step::Wildcard)?;
                        }
                        _ => {
                            let name = self.field_name();
                            if name.is_empty() {
                                return match self.peek() {
                                    None => err("unexpected end after '.'"),
                                    Some(_) => err(format!(
                                        "expected a field name after '.', found {:?}",
                                        self.rest_char()
                                    )),
                                };
                            }
                            self.push(&mut steps, Step::Field(name))?;
                        }
                    }
                }
                b'[' => {
                    self.at += 1;
                    let step = self.bracket()?;
                    self.push(&mut steps, step)?;
                }
                _ if in_filter => break,
                _ => {
                    return err(format!(
                        "expected '.' or '[' at byte {}, found {:?}",
                        self.at,
                        self.rest_char()
                    ));
                }
            }
        }
        Ok(steps)
    }

    /// client-go's field: everything up to a terminator.
    fn field_name(&mut self) -> String {
        let start = self.at;
        while let Some(c) = self.peek() {
            if matches!(
                c,
                b'.' | b','
                    | b'['
                    | b']'
                    | b'$'
                    | b'@'
                    | b'{'
                    | b'}'
                    | b' '
                    | b'\t'
                    | b'\n'
                    | b'\r'
            ) || c == b'('
                || c == b')'
                || c == b'='
                || c == b'!'
                || c == b'<'
                || c == b'>'
            {
                break;
            }
            self.at += 1;
        }
        self.src[start..self.at].to_owned()
    }

    fn quoted(&mut self) -> Result<String, ParseError> {
        let Some(q) = self.peek() else {
            return err("unexpected end of path");
        };
        self.at += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.src[self.at..].chars().next() else {
                return err("unterminated quoted string");
            };
            self.at += c.len_utf8();
            match c {
                '\\' => {
                    let Some(e) = self.src[self.at..].chars().next() else {
                        return err("unterminated quoted string");
                    };
                    self.at += e.len_utf8();
                    out.push(e);
                }
                c if c as u32 == u32::from(q) => return Ok(out),
                c => out.push(c),
            }
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), ParseError> {
        self.skip_spaces();
        match self.peek() {
            Some(x) if x == c => {
                self.at += 1;
                Ok(())
            }
            None => err(format!("unexpected end of path, expected '{}'", c as char)),
            Some(_) => err(format!(
                "expected '{}', found {:?}",
                c as char,
                self.rest_char()
            )),
        }
    }

    /// After `[`: up to and including `]`.
    fn bracket(&mut self) -> Result<Step, ParseError> {
        self.skip_spaces();
        let step = match self.peek() {
            None => return err("unexpected end of path, expected ']'"),
            Some(b'\'' | b'"') => Step::Field(self.quoted()?),
            Some(b'*') => {
                self.at += 1;
                Step::Wildcard
            }
            Some(b'?') => {
                self.at += 1;
                self.expect(b'(')?;
                let f = self.filter()?;
                self.expect(b')')?;
                Step::Filter(Box::new(f))
            }
            Some(_) => {
                let end = self.src[self.at..]
                    .find(']')
                    .map_or(self.s.len(), |i| self.at + i);
                let body = &self.src[self.at..end];
                if body.contains(',') {
                    return err("unions ([a,b]) are not supported");
                }
                self.at = end;
                let int = |s: &str| -> Result<Option<i64>, ParseError> {
                    let s = s.trim();
                    if s.is_empty() {
                        return Ok(None);
                    }
                    s.parse()
                        .map(Some)
                        .or_else(|_| err(format!("invalid array index {s:?}")))
                };
                let parts: Vec<&str> = body.split(':').collect();
                match parts[..] {
                    [i] => match int(i)? {
                        Some(i) => Step::Index(i),
                        None => return err("empty array index"),
                    },
                    [a, b] => Step::Slice(int(a)?, int(b)?, None),
                    [a, b, c] => {
                        let step = int(c)?;
                        if step.is_some_and(|s| s <= 0) {
                            return err("slice step must be positive");
                        }
                        Step::Slice(int(a)?, int(b)?, step)
                    }
                    _ => return err(format!("invalid array index {body:?}")),
                }
            }
        };
        self.expect(b']')?;
        Ok(step)
    }

    fn filter(&mut self) -> Result<Filter, ParseError> {
        let left = self.operand()?;
        self.skip_spaces();
        let op = match (self.peek(), self.s.get(self.at + 1).copied()) {
            (Some(b'='), Some(b'=')) => Some((Op::Eq, 2)),
            (Some(b'!'), Some(b'=')) => Some((Op::Ne, 2)),
            (Some(b'<'), Some(b'=')) => Some((Op::Le, 2)),
            (Some(b'>'), Some(b'=')) => Some((Op::Ge, 2)),
            (Some(b'<'), _) => Some((Op::Lt, 1)),
            (Some(b'>'), _) => Some((Op::Gt, 1)),
            (Some(b')'), _) => None,
            (None, _) => return err("unexpected end of path in filter"),
            _ => {
                return err(format!(
                    "unsupported filter operator at {:?}",
                    &self.src[self.at..]
                ));
            }
        };
        let compare = match op {
            None => None,
            Some((op, n)) => {
                self.at += n;
                Some((op, self.operand()?))
            }
        };
        if let Operand::Literal(_) = left
            && compare.is_none()
        {
            return err("a filter without a comparison must test a path starting with '@'");
        }
        Ok(Filter { left, compare })
    }

    fn operand(&mut self) -> Result<Operand, ParseError> {
        self.skip_spaces();
        match self.peek() {
            Some(b'@') => {
                self.at += 1;
                Ok(Operand::Current(self.steps(true)?))
            }
            Some(b'\'' | b'"') => Ok(Operand::Literal(Literal::Str(self.quoted()?))),
            Some(_) => {
                let start = self.at;
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.') {
                        self.at += 1;
                    } else {
                        break;
                    }
                }
                let word = &self.src[start..self.at];
                let lit = match word {
                    "true" => Literal::Bool(true),
                    "false" => Literal::Bool(false),
                    _ => {
                        if let Ok(i) = word.parse::<i64>() {
                            Literal::Int(i)
                        } else if let Ok(f) = word.parse::<f64>()
                            && f.is_finite()
                        {
                            Literal::Float(f)
                        } else {
                            return err(format!("unrecognized filter operand {word:?}"));
                        }
                    }
                };
                Ok(Operand::Literal(lit))
            }
            None => err("unexpected end of path in filter"),
        }
    }
}

/// Evaluation failed (client-go returns an error; a Table cell is then `null`).
struct EvalError;

fn eval<'a>(steps: &[Step], mut cur: Vec<&'a Value>) -> Result<Vec<&'a Value>, EvalError> {
    for step in steps {
        let mut next = Vec::new();
        for v in cur {
            if v.is_null() {
                continue;
            }
            match step {
                Step::Field(name) => {
                    if let Some(m) = v.as_object().and_then(|o| o.get(name)) {
                        next.push(m);
                    }
                }
                Step::Wildcard => match v {
                    Value::Object(o) => next.extend(o.values()),
                    Value::Array(a) => next.extend(a.iter()),
                    _ => {}
                },
                Step::Index(i) => {
                    let a = v.as_array().ok_or(EvalError)?;
                    let len = i64::try_from(a.len()).map_err(|_| EvalError)?;
                    let at = if *i < 0 { i + len } else { *i };
                    let at = usize::try_from(at).map_err(|_| EvalError)?;
                    next.push(a.get(at).ok_or(EvalError)?);
                }
                Step::Slice(start, end, step) => {
                    let a = v.as_array().ok_or(EvalError)?;
                    let len = i64::try_from(a.len()).map_err(|_| EvalError)?;
                    let fix = |n: i64| if n < 0 { n + len } else { n };
                    let s = fix(start.unwrap_or(0));
                    let e = fix(end.unwrap_or(len)).min(len);
                    if s == e {
                        continue;
                    }
                    if s < 0 || s >= len || e < s {
                        return Err(EvalError);
                    }
                    let by = usize::try_from(step.unwrap_or(1)).map_err(|_| EvalError)?;
                    let (s, e) = (s as usize, e as usize);
                    next.extend(a[s..e].iter().step_by(by));
                }
                Step::Filter(f) => {
                    let a = v.as_array().ok_or(EvalError)?;
                    for item in a {
                        if passes(f, item)? {
                            next.push(item);
                        }
                    }
                }
            }
        }
        cur = next;
    }
    Ok(cur)
}

/// One value of a filter operand: `None` when the path found nothing (the item is skipped).
fn operand_value<'a>(o: &'a Operand, item: &'a Value) -> Result<Option<Cmp<'a>>, EvalError> {
    match o {
        Operand::Literal(l) => Ok(Some(match l {
            Literal::Int(i) => Cmp::Int(*i),
            Literal::Float(f) => Cmp::Float(*f),
            Literal::Str(s) => Cmp::Str(s),
            Literal::Bool(b) => Cmp::Bool(*b),
        })),
        Operand::Current(steps) => {
            let found = eval(steps, vec![item])?;
            match found[..] {
                [] => Ok(None),
                [v] => Ok(Some(Cmp::of(v)?)),
                _ => Err(EvalError),
            }
        }
    }
}

/// A comparable value, as Go's `text/template` compares them.
#[derive(Clone, Copy)]
enum Cmp<'a> {
    Int(i64),
    Float(f64),
    Str(&'a str),
    Bool(bool),
}

impl<'a> Cmp<'a> {
    fn of(v: &'a Value) -> Result<Self, EvalError> {
        Ok(match v {
            Value::Bool(b) => Cmp::Bool(*b),
            Value::String(s) => Cmp::Str(s),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Cmp::Int(i),
                None => Cmp::Float(n.as_f64().ok_or(EvalError)?),
            },
            _ => return Err(EvalError),
        })
    }
}

fn passes(f: &Filter, item: &Value) -> Result<bool, EvalError> {
    let Some((op, right)) = &f.compare else {
        let Operand::Current(steps) = &f.left else {
            return Err(EvalError);
        };
        return Ok(!eval(steps, vec![item])?.is_empty());
    };
    let (Some(l), Some(r)) = (operand_value(&f.left, item)?, operand_value(right, item)?) else {
        return Ok(false);
    };
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (l, r) {
        (Cmp::Int(a), Cmp::Int(b)) => Some(a.cmp(&b)),
        (Cmp::Float(a), Cmp::Float(b)) => a.partial_cmp(&b),
        (Cmp::Str(a), Cmp::Str(b)) => Some(a.cmp(b)),
        (Cmp::Bool(a), Cmp::Bool(b)) => match op {
            Op::Eq => return Ok(a == b),
            Op::Ne => return Ok(a != b),
            _ => return Err(EvalError),
        },
        // Go's template comparison refuses mixed kinds (an integer with a float too).
        _ => return Err(EvalError),
    };
    let ord = ord.ok_or(EvalError)?;
    Ok(match op {
        Op::Eq => ord == Ordering::Equal,
        Op::Ne => ord != Ordering::Equal,
        Op::Lt => ord == Ordering::Less,
        Op::Le => ord != Ordering::Greater,
        Op::Gt => ord == Ordering::Greater,
        Op::Ge => ord != Ordering::Less,
    })
}

/// A value as client-go's `PrintResults` prints it: strings bare, numbers and booleans as Go's
/// `fmt` prints them (`1.5`, `1e+06`), objects and lists as compact JSON with Go's HTML
/// escaping. `None` for `null`, which client-go cannot print.
pub(crate) fn go_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float(n.as_f64()?),
        }),
        Value::Array(_) | Value::Object(_) => Some(go_json(v)),
    }
}

/// Compact JSON with Go's `encoding/json` escaping of `<`, `>`, `&`, U+2028 and U+2029 (these
/// appear only inside strings, so replacing them in the output is safe).
fn go_json(v: &Value) -> String {
    let s = v.to_string();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `%v` of a `float64`: the shortest digits, in `%e` form when the exponent is below -4
/// or at least 6 (the shortest-precision rule of `strconv.FormatFloat(f, 'g', -1, 64)`).
pub(crate) fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `-1.2345e-7`.
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if neg { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}{rest}e{esign}{:02}", exp.unsigned_abs());
    }
    let point = exp + 1; // digits before the decimal point
    let out = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else {
        let point = point as usize;
        if digits.len() <= point {
            format!("{digits}{}", "0".repeat(point - digits.len()))
        } else {
            format!("{}.{}", &digits[..point], &digits[point..])
        }
    };
    format!("{sign}{out}")
}

/// A printer column's cell from the path's first result, as the apiextensions Table
/// convertor makes it: `integer` truncates floats, `number` widens integers, `boolean` needs
/// a boolean, `string` prints any value (see [`go_text`]), `date` passes a string through (the
/// Table layer turns it into an age, or `<invalid>`). Anything else, a missing value and
/// `null` give `null`.
pub(crate) fn cell(column_type: &str, value: Option<&Value>) -> Value {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Value::Null;
    };
    match (column_type, value) {
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => Value::from(i),
            // Go's int64(float64) conversion; Rust's `as` saturates where Go's is undefined.
            None => n.as_f64().map_or(Value::Null, |f| Value::from(f as i64)),
        },
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, Value::from),
        ("boolean", Value::Bool(b)) => Value::Bool(*b),
        ("string", v) => go_text(v).map_or(Value::Null, Value::String),
        ("date", Value::String(s)) => Value::String(s.clone()),
        _ => Value::Null,
    }
}

/// The description of a column without one:
/// `Custom resource definition column (in JSONPath format): <path>`.
pub(crate) fn default_column_description(json_path: &str) -> String {
    format!("Custom resource definition column (in JSONPath format): {json_path}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj() -> Value {
        json!({
            "metadata": {"name": "a", "creationTimestamp": "2024-01-02T03:04:05Z",
                         "labels": {"app.kubernetes.io/name": "web"}},
            "spec": {"replicas": 3, "ratio": 1.5, "on": true, "nothing": null,
                     "items": [{"name": "x", "n": 1}, {"name": "y", "n": 2}, {"n": 3}],
                     "nested": {"k1": {"v": 1}, "k2": {"v": 2}}},
            "status": {"conditions": [{"type": "Ready", "status": "True"},
                                      {"type": "Synced", "status": "False", "n": 1.5}]}
        })
    }

    fn find(path: &str) -> Vec<Value> {
        JsonPath::parse(path)
            .unwrap()
            .find(&obj())
            .into_iter()
            .cloned()
            .collect()
    }

    #[test]
    fn simple_paths() {
        assert_eq!(find(".spec.replicas"), [json!(3)]);
        assert_eq!(find("{.spec.replicas}"), [json!(3)]);
        assert_eq!(find("$.spec.replicas"), [json!(3)]);
        assert_eq!(
            find(".metadata.creationTimestamp"),
            [json!("2024-01-02T03:04:05Z")]
        );
        assert_eq!(find(".status.conditions[0].type"), [json!("Ready")]);
        assert_eq!(find(".status.conditions[-1].type"), [json!("Synced")]);
        assert_eq!(find(".spec.items[*].name"), [json!("x"), json!("y")]);
        assert_eq!(find(".spec.items[0:2].n"), [json!(1), json!(2)]);
        assert_eq!(find(".spec.items[::2].n"), [json!(1), json!(3)]);
        assert_eq!(find(".spec.nested.*.v"), [json!(1), json!(2)]);
        assert_eq!(
            find(".metadata.labels['app.kubernetes.io/name']"),
            [json!("web")]
        );
        assert_eq!(
            find(r#".metadata.labels["app.kubernetes.io/name"]"#),
            [json!("web")]
        );
        assert_eq!(find(".spec['replicas']"), [json!(3)]);
        assert_eq!(find(".spec.nothing"), [json!(null)]);
    }

    #[test]
    fn missing_and_errors_give_nothing() {
        for p in [
            ".spec.missing",
            ".spec.nothing.deeper",
            ".spec.replicas.x",
            ".status.conditions[5]",
            ".status.conditions[-5]",
            ".spec.replicas[0]",
            ".spec.nested[0]",
            ".spec.items[5:]",
            // Comparing an integer with a float is an error in Go's templates.
            ".status.conditions[?(@.n==1)].type",
        ] {
            assert_eq!(find(p), Vec::<Value>::new(), "{p}");
        }
        assert_eq!(find(".spec.items[3:3]"), Vec::<Value>::new());
    }

    #[test]
    fn filters() {
        assert_eq!(
            find(r#".status.conditions[?(@.type=="Ready")].status"#),
            [json!("True")]
        );
        assert_eq!(
            find(".status.conditions[?(@.type != 'Ready')].status"),
            [json!("False")]
        );
        assert_eq!(find(".spec.items[?(@.n>1)].n"), [json!(2), json!(3)]);
        assert_eq!(find(".spec.items[?(@.n<=2)].n"), [json!(1), json!(2)]);
        assert_eq!(find(".spec.items[?(@.n>=3)].n"), [json!(3)]);
        assert_eq!(find(".spec.items[?(@.n<2)].n"), [json!(1)]);
        assert_eq!(find(".spec.items[?(@.name)].n"), [json!(1), json!(2)]);
        assert_eq!(
            find(".status.conditions[?(@.n==1.5)].type"),
            [json!("Synced")]
        );
        assert_eq!(
            find(".status.conditions[?(@.type=='Ready')]"),
            [json!({"type": "Ready", "status": "True"})]
        );
    }

    #[test]
    fn parse_errors() {
        let e = |p: &str| JsonPath::parse(p).unwrap_err().to_string();
        assert_eq!(e(""), "must not be empty");
        assert_eq!(e("{}"), "must not be empty");
        assert_eq!(e("{.spec"), "unclosed action: missing '}'");
        assert_eq!(e("spec"), "must start with '.' or '[', found \"s\"");
        assert_eq!(e(".spec..x"), "recursive descent (..) is not supported");
        assert_eq!(e(".spec."), "unexpected end after '.'");
        assert_eq!(e(".spec[0,1]"), "unions ([a,b]) are not supported");
        assert_eq!(e(".spec[a]"), "invalid array index \"a\"");
        assert_eq!(e(".spec[]"), "empty array index");
        assert_eq!(e(".spec[0"), "unexpected end of path, expected ']'");
        assert_eq!(e(".spec['a"), "unterminated quoted string");
        assert_eq!(e(".spec[::0]"), "slice step must be positive");
        assert_eq!(
            e(".spec[?(@.a =~ 'x')]"),
            "unsupported filter operator at \"=~ 'x')]\""
        );
        assert_eq!(e(".spec[?(@.a == x)]"), "unrecognized filter operand \"x\"");
        assert_eq!(e(".spec[?(@.a == 'x']"), "expected ')', found \"]\"");
        assert_eq!(e(".spec x"), "expected '.' or '[' at byte 5, found \" \"");
        assert_eq!(
            e(&format!(".{}", "a".repeat(MAX_PATH_LEN))),
            "must be at most 512 bytes"
        );
        assert_eq!(e(&".a".repeat(33)), "must have at most 32 segments");
        assert!(JsonPath::parse(&".a".repeat(32)).is_ok());
        // Steps inside filters count too.
        let deep = format!(".a[?(@{} == 1)]", ".b".repeat(31));
        assert_eq!(e(&deep), "must have at most 32 segments");
    }

    #[test]
    fn text_and_floats() {
        let p = JsonPath::parse(".spec.items[*].name").unwrap();
        assert_eq!(p.find(&obj()), [&json!("x"), &json!("y")]);
        assert_eq!(p.first(&obj()), Some(&json!("x")));
        assert_eq!(JsonPath::parse(".spec.gone").unwrap().first(&obj()), None);
        for (f, s) in [
            (1.5, "1.5"),
            (3.0, "3"),
            (-2.25, "-2.25"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (1e21, "1e+21"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-1.5e-7, "-1.5e-07"),
            (0.0, "0"),
            (100.0, "100"),
        ] {
            assert_eq!(go_float(f), s, "{f}");
        }
        assert_eq!(go_text(&json!(true)).as_deref(), Some("true"));
        assert_eq!(
            go_text(&json!([1, "a&b"])).as_deref(),
            Some(r#"[1,"a\u0026b"]"#)
        );
    }

    #[test]
    fn cells() {
        let o = obj();
        let c = |t: &str, p: &str| cell(t, JsonPath::parse(p).unwrap().first(&o));
        assert_eq!(c("integer", ".spec.replicas"), json!(3));
        assert_eq!(c("integer", ".spec.ratio"), json!(1));
        assert_eq!(c("integer", ".spec.on"), json!(null));
        assert_eq!(c("number", ".spec.replicas"), json!(3.0));
        assert_eq!(c("number", ".spec.ratio"), json!(1.5));
        assert_eq!(c("number", ".metadata.name"), json!(null));
        assert_eq!(c("boolean", ".spec.on"), json!(true));
        assert_eq!(c("boolean", ".spec.replicas"), json!(null));
        assert_eq!(c("string", ".metadata.name"), json!("a"));
        assert_eq!(c("string", ".spec.ratio"), json!("1.5"));
        assert_eq!(c("string", ".spec.on"), json!("true"));
        assert_eq!(c("string", ".spec.nested.k1"), json!(r#"{"v":1}"#));
        assert_eq!(c("string", ".spec.nothing"), json!(null));
        assert_eq!(c("string", ".spec.missing"), json!(null));
        assert_eq!(
            c("date", ".metadata.creationTimestamp"),
            json!("2024-01-02T03:04:05Z")
        );
        assert_eq!(c("date", ".spec.replicas"), json!(null));
        assert_eq!(c("integer", ".spec.nothing"), json!(null));
        assert_eq!(c("unknown", ".spec.replicas"), json!(null));
        assert_eq!(
            default_column_description(".spec.x"),
            "Custom resource definition column (in JSONPath format): .spec.x"
        );
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn json_path() {
        use crate::apiextensions::jsonpath::JsonPath;
        use serde_json::json;

        let obj = json!({"status": {"conditions": [
            {"type": "Synced", "status": "True"}, {"type": "Ready", "status": "False"}]}});
        let p = JsonPath::parse(r#".status.conditions[?(@.type=="Ready")].status"#).unwrap();
        assert_eq!(p.first(&obj), Some(&json!("False")));
        assert_eq!(
            JsonPath::parse(".status.replicas").unwrap().first(&obj),
            None
        );
        assert_eq!(
            JsonPath::parse(".spec..x").unwrap_err().to_string(),
            "recursive descent (..) is not supported"
        );
    }

    #[test]
    fn go_text() {
        use crate::apiextensions::jsonpath::go_text;
        use serde_json::json;

        assert_eq!(go_text(&json!("a")).as_deref(), Some("a"));
        assert_eq!(go_text(&json!(3)).as_deref(), Some("3"));
        assert_eq!(go_text(&json!(1000000.0)).as_deref(), Some("1e+06"));
        assert_eq!(
            go_text(&json!({"b": 1, "a": "<"})).as_deref(),
            Some(r#"{"a":"\u003c","b":1}"#)
        );
        assert_eq!(go_text(&json!(null)), None);
    }

    #[test]
    fn cell() {
        use crate::apiextensions::jsonpath::cell;
        use serde_json::json;

        assert_eq!(cell("integer", Some(&json!(2.9))), json!(2));
        assert_eq!(cell("number", Some(&json!(2))), json!(2.0));
        assert_eq!(cell("string", Some(&json!(7))), json!("7"));
        assert_eq!(cell("boolean", Some(&json!("true"))), json!(null));
        assert_eq!(cell("date", None), json!(null));
    }
}
