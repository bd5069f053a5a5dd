//! The built-in separation-of-duties gate as a native-ABI v1 module: denies
//! an actor a duty (a tool id) incompatible with one it performed earlier
//! in the task, from the host-supplied history. Specified in
//! plugins/duties/README.md; a port of the Go package plugins/duties, kept
//! identical by plugins/builtin's differential fuzz target. Built by
//! `make plugins`.

#[path = "gatekit.rs"]
mod gatekit;

use gatekit::{same, Answer, Gate, Input, Output, Reader};

const REASON_SEPARATE: &str = "duties.separate";
const REASON_UNCONSTRAINED: &str = "duties.unconstrained";
const REASON_CONFLICT: &str = "duties.conflict";
const REASON_NO_ACTOR: &str = "duties.no_actor";
const REASON_NO_HISTORY: &str = "duties.no_history";

struct Duties {
    /// duty → the duties incompatible with it.
    incompatible: Vec<(String, Vec<String>)>,
    /// The allows, encoded once.
    separate: Vec<u8>,
    unconstrained: Vec<u8>,
}

/// Reads {"incompatible": {duty: [duty, ...]}} as encoding/json decodes it
/// into the Go Config with DisallowUnknownFields: the field name matches
/// in any ASCII case; a repeated "incompatible" object is merged into the
/// map (null resets it); a repeated duty keeps its last list.
fn read_config(raw: &[u8]) -> Option<Vec<(String, Vec<String>)>> {
    let mut r = Reader::new(raw);
    r.ws();
    let mut map: Option<Vec<(String, Vec<String>)>> = None;
    r.object(|r, k| {
        if !k.eq_ignore_ascii_case("incompatible") {
            return None;
        }
        if r.literal(b"null") {
            map = None;
            return Some(());
        }
        let m = map.get_or_insert_with(Vec::new);
        r.object(|r, duty| {
            let mut list = Vec::new();
            if !r.literal(b"null") {
                r.array(|r| {
                    if r.literal(b"null") {
                        list.push(String::new()); // a null string stays ""
                        return Some(());
                    }
                    if r.peek() != b'"' {
                        return None;
                    }
                    list.push(r.string()?.into_owned());
                    Some(())
                })?;
            }
            let duty = duty.into_owned();
            match m.iter_mut().find(|(d, _)| *d == duty) {
                Some(e) => e.1 = list,
                None => m.push((duty, list)),
            }
            Some(())
        })
    })?;
    Some(map.unwrap_or_default())
}

impl Gate for Duties {
    fn configure(config: &[u8]) -> Option<Self> {
        let map = read_config(config)?;
        if map.is_empty() {
            return None;
        }
        for (duty, others) in &map {
            if duty.is_empty() || others.is_empty() {
                return None;
            }
            if others.iter().any(|o| o.is_empty() || o == duty) {
                return None;
            }
        }
        Some(Duties {
            incompatible: map,
            separate: Output::allow(REASON_SEPARATE).encode(),
            unconstrained: Output::allow(REASON_UNCONSTRAINED).encode(),
        })
    }

    fn evaluate(&self, input: &Input) -> Answer<'_> {
        let others = match self.incompatible.iter().find(|(d, _)| same(d, input.tool)) {
            None => return Answer::Encoded(&self.unconstrained),
            Some((_, o)) => o,
        };
        let actor = match &input.context.actor {
            Some(a) if !a.kind.is_empty() && !a.id.is_empty() => a,
            _ => return deny(&input.tool, REASON_NO_ACTOR, "no actor: separation of duties cannot be checked".to_string()).into(),
        };
        let history = match &input.context.assignments {
            None => {
                return deny(
                    &input.tool,
                    REASON_NO_HISTORY,
                    "no duty history from the host: separation of duties cannot be checked".to_string(),
                )
                .into()
            }
            Some(h) => h,
        };
        let mut conflicts: Vec<&str> = Vec::new();
        for a in history {
            if same(a.actor.kind, actor.kind) && same(a.actor.id, actor.id) && others.iter().any(|o| same(o, a.duty)) {
                if !conflicts.iter().any(|c| same(c, a.duty)) {
                    conflicts.push(a.duty);
                }
            }
        }
        if !conflicts.is_empty() {
            // NB: an insertion sort of the few distinct duties: the order
            // of sort_unstable, without its ~5 KB of code.
            for k in 1..conflicts.len() {
                let mut j = k;
                while j > 0 && conflicts[j] < conflicts[j - 1] {
                    conflicts.swap(j, j - 1);
                    j -= 1;
                }
            }
            return deny(
                &input.tool,
                REASON_CONFLICT,
                format!(
                    "{}:{} already performed {} in this task, incompatible with {}",
                    actor.kind,
                    actor.id,
                    conflicts.join(", "),
                    input.tool
                ),
            )
            .into();
        }
        Answer::Encoded(&self.separate)
    }
}

fn deny(tool: &str, reason: &'static str, detail: String) -> Output {
    let mut o = Output::deny(reason);
    o.detail = detail;
    o.message = format!("permission denied: {} is not allowed for this actor (separation of duties)", tool);
    o
}

export_gate!(
    Duties,
    r#"{"name":"duties","version":"1.0.0","summary":"separation of duties: denies an actor a duty incompatible with one it performed earlier in the task (host-supplied history; no authentication claim)"}"#
);
