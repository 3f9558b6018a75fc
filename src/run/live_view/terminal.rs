//! The terminal while the live view is up: raw mode and the alternate screen on stderr, given
//! back on every way out — the view's end, an error while drawing, a panic anywhere (a hook
//! restores it before the panic message is printed), and a second Ctrl-C.

use std::io::{self, Stderr};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

/// Whether the terminal is in the view's state now (raw mode, alternate screen).
static TAKEN: AtomicBool = AtomicBool::new(false);

/// The terminal, taken for the view; given back when dropped.
pub(super) struct Screen {
    /// Draws on stderr.
    pub term: Terminal<CrosstermBackend<Stderr>>,
}

impl Screen {
    /// Takes the terminal: raw mode (keys come to the view, Ctrl-C included), the alternate
    /// screen (what was on the terminal is back afterwards), no cursor.
    pub(super) fn take() -> io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        TAKEN.store(true, Ordering::SeqCst);
        let screen = execute!(io::stderr(), EnterAlternateScreen, Hide)
            .and_then(|()| Terminal::new(CrosstermBackend::new(io::stderr())));
        match screen {
            Ok(term) => Ok(Self { term }),
            Err(e) => {
                give_back();
                Err(e)
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        give_back();
    }
}

/// Gives the terminal back as it was (idempotent; does nothing when the view does not hold it).
pub(super) fn give_back() {
    if TAKEN.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(io::stderr(), LeaveAlternateScreen, Show);
    }
}

/// On a panic, the terminal is given back first, so the message is readable and the shell works.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            give_back();
            before(info);
        }));
    });
}
