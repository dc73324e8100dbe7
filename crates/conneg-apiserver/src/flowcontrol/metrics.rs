//! `apiserver_flowcontrol_*`, as Kubernetes names them: requests dispatched and rejected
//! (with the reason), waiting and executing, per priority level and flow schema; seats
//! executing and the nominal limit, per priority level.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// Why a request was answered 429 (the `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// Its queue held `queueLengthLimit` requests.
    QueueFull,
    /// It waited in its queue past the wait limit.
    TimeOut,
    /// Its level rejects rather than queues, and its seats were taken.
    ConcurrencyLimit,
}

impl Rejection {
    const ALL: [Rejection; 3] = [
        Rejection::QueueFull,
        Rejection::TimeOut,
        Rejection::ConcurrencyLimit,
    ];

    fn label(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue-full",
            Rejection::TimeOut => "time-out",
            Rejection::ConcurrencyLimit => "concurrency-limit",
        }
    }
}

/// The counters of one flow schema (in its priority level).
#[derive(Debug, Default)]
pub(crate) struct FlowStats {
    dispatched: AtomicU64,
    rejected: [AtomicU64; 3],
    in_queue: AtomicI64,
    executing: AtomicI64,
}

impl FlowStats {
    pub(crate) fn queued(&self) {
        self.in_queue.fetch_add(1, Relaxed);
    }
    pub(crate) fn left_queue(&self) {
        self.in_queue.fetch_sub(1, Relaxed);
    }
    pub(crate) fn started(&self) {
        self.dispatched.fetch_add(1, Relaxed);
        self.executing.fetch_add(1, Relaxed);
    }
    pub(crate) fn finished(&self) {
        self.executing.fetch_sub(1, Relaxed);
    }
    pub(crate) fn rejected(&self, why: Rejection) {
        let i = Rejection::ALL.iter().position(|r| *r == why).unwrap_or(0);
        self.rejected[i].fetch_add(1, Relaxed);
    }
}

/// What one priority level reports.
pub(crate) struct LevelReport<'a> {
    pub(crate) name: &'a str,
    pub(crate) nominal_seats: u32,
    pub(crate) executing_seats: u32,
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// The exposition text of the flow counters (`(level, schema, stats)`) and the levels.
pub(crate) fn render<'a>(
    flows: impl Iterator<Item = (&'a str, &'a str, &'a FlowStats)> + Clone,
    levels: &[LevelReport<'_>],
) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "apiserver_flowcontrol_dispatched_requests_total",
        "counter",
        "Number of requests executed by API Priority and Fairness subsystem",
    );
    for (pl, fs, s) in flows.clone() {
        let _ = writeln!(
            out,
            "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {}",
            s.dispatched.load(Relaxed)
        );
    }
    header(
        &mut out,
        "apiserver_flowcontrol_rejected_requests_total",
        "counter",
        "Number of requests rejected by API Priority and Fairness subsystem",
    );
    for (pl, fs, s) in flows.clone() {
        for (r, n) in Rejection::ALL.iter().zip(&s.rejected) {
            let n = n.load(Relaxed);
            if n > 0 {
                let _ = writeln!(
                    out,
                    "apiserver_flowcontrol_rejected_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\",reason=\"{}\"}} {n}",
                    r.label()
                );
            }
        }
    }
    for (name, help, read) in [
        (
            "apiserver_flowcontrol_current_inqueue_requests",
            "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
            &(|s: &FlowStats| s.in_queue.load(Relaxed)) as &dyn Fn(&FlowStats) -> i64,
        ),
        (
            "apiserver_flowcontrol_current_executing_requests",
            "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
            &|s: &FlowStats| s.executing.load(Relaxed),
        ),
    ] {
        header(&mut out, name, "gauge", help);
        for (pl, fs, s) in flows.clone() {
            let _ = writeln!(
                out,
                "{name}{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {}",
                read(s).max(0)
            );
        }
    }
    for (name, help, read) in [
        (
            "apiserver_flowcontrol_current_executing_seats",
            "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
            (|l| l.executing_seats) as fn(&LevelReport<'_>) -> u32,
        ),
        (
            "apiserver_flowcontrol_nominal_limit_seats",
            "Nominal number of execution seats configured for each priority level",
            |l| l.nominal_seats,
        ),
    ] {
        header(&mut out, name, "gauge", help);
        for l in levels {
            let _ = writeln!(out, "{name}{{priority_level=\"{}\"}} {}", l.name, read(l));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_reports_its_seats_under_one_header_per_gauge() {
        let levels = [
            LevelReport {
                name: "exempt",
                nominal_seats: 0,
                executing_seats: 2,
            },
            LevelReport {
                name: "global-default",
                nominal_seats: 49,
                executing_seats: 7,
            },
        ];
        let text = render(std::iter::empty(), &levels);
        let gauge = |name: &str| -> Vec<&str> {
            text.lines()
                .filter(|l| l.contains(name))
                .filter(|l| !l.starts_with("# HELP"))
                .collect()
        };
        assert_eq!(
            gauge("apiserver_flowcontrol_current_executing_seats"),
            [
                "# TYPE apiserver_flowcontrol_current_executing_seats gauge",
                r#"apiserver_flowcontrol_current_executing_seats{priority_level="exempt"} 2"#,
                r#"apiserver_flowcontrol_current_executing_seats{priority_level="global-default"} 7"#,
            ]
        );
        assert_eq!(
            gauge("apiserver_flowcontrol_nominal_limit_seats"),
            [
                "# TYPE apiserver_flowcontrol_nominal_limit_seats gauge",
                r#"apiserver_flowcontrol_nominal_limit_seats{priority_level="exempt"} 0"#,
                r#"apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"} 49"#,
            ]
        );
        assert!(text.contains(
            "# HELP apiserver_flowcontrol_nominal_limit_seats Nominal number of execution seats configured for each priority level\n"
        ));
    }
}
