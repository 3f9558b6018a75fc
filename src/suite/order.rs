//! The order of a suite's measured runs. With `repeats > 1` the targets take turns, one run each
//! per round (A B C A B C …): a slow drift of the machine (its temperature, a neighbour's load)
//! is then shared by every target instead of being mistaken for a difference between them, and
//! the comparison can tell drift from difference. Each turn starts the target's process (when it
//! has a `command`), checks its health, runs `reset` and one measured run, and stops it again, so
//! that two targets never run at once and may share a port. `order = "sequential"` gives every
//! target all its runs in one turn (A A A B B B …), its process started once.

use std::ops::RangeInclusive;

/// How a suite orders its targets' runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// A B C A B C …: one run of each target per round (the default).
    #[default]
    Interleaved,
    /// A A A B B B …: every run of a target before the next target's.
    Sequential,
}

impl Order {
    /// Every order with its name in the suite file.
    pub const ALL: [(Order, &'static str); 2] = [
        (Order::Interleaved, "interleaved"),
        (Order::Sequential, "sequential"),
    ];

    /// The order named `name` in a suite file.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(o, _)| *o)
    }
}

/// The turns each target takes, round by round: the runs (numbered from 1, inclusive) of one
/// turn. Interleaved: one run per turn; sequential (or a single run): one turn with them all.
pub fn turns(order: Order, repeats: u32) -> Vec<RangeInclusive<u32>> {
    match order {
        Order::Interleaved if repeats > 1 => (1..=repeats).map(|i| i..=i).collect(),
        _ => vec![1..=repeats.max(1)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_interleaved_by_default() {
        assert_eq!(Order::default(), Order::Interleaved);
        assert_eq!(turns(Order::Interleaved, 3), vec![1..=1, 2..=2, 3..=3]);
        assert_eq!(turns(Order::Sequential, 3), vec![1..=3]);
        assert_eq!(turns(Order::Interleaved, 1), vec![1..=1]);
        assert_eq!(Order::parse("sequential"), Some(Order::Sequential));
        assert_eq!(Order::parse("random"), None);
    }
}
