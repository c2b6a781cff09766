//! The Python wire (`python/fencelab_wire.py`), kept once. The server and a
//! learner's `lease` proxy import it in the repository; fencelab writes its
//! code in place of that import, so each script it ships runs alone.

use std::sync::LazyLock;

const WIRE: &str = include_str!("../../../python/fencelab_wire.py");
/// The line each script imports the wire with, replaced when written.
const IMPORT: &str =
    "from fencelab_wire import Opaque, decode, encode  # fencelab: the wire (written in place)\n";

/// `script` with the wire's code in place of its import.
fn inlined(script: &str) -> String {
    assert!(script.contains(IMPORT), "a script that imports the wire");
    script.replacen(IMPORT, WIRE, 1)
}

/// The server program, as shipped.
pub(crate) fn server() -> &'static str {
    static SERVER: LazyLock<String> =
        LazyLock::new(|| inlined(include_str!("../../../python/fencelab_server.py")));
    &SERVER
}

/// The lab's API as a learner's Python tests import it.
pub(crate) fn proxy() -> &'static str {
    static PROXY: LazyLock<String> =
        LazyLock::new(|| inlined(include_str!("../../../python/lease_proxy.py")));
    &PROXY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_script_ships_the_wire_once_and_imports_nothing_of_fencelab() {
        for script in [server(), proxy()] {
            assert!(!script.contains("import fencelab_wire") && !script.contains(IMPORT));
            assert_eq!(script.matches("def encode(").count(), 1);
            assert_eq!(script.matches("def decode(").count(), 1);
            assert!(script.contains(WIRE));
        }
    }
}
