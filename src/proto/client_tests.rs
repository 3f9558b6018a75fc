//! Tests of the client seam's protocol names.

use super::*;

#[test]
fn a_protocol_is_read_and_described_by_its_name() {
    let schema = serde_json::to_value(schemars::schema_for!(Protocol)).unwrap();
    let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
    // Documented variants are `oneOf` a `const` each.
    let one_of = schema["oneOf"].as_array().unwrap();
    let listed: Vec<&str> = one_of.iter().filter_map(|s| s["const"].as_str()).collect();
    assert_eq!(listed, names, "{schema}");
    for &p in Protocol::ALL {
        assert_eq!(p.name().parse::<Protocol>(), Ok(p));
        let read: Protocol = serde_json::from_value(p.name().into()).unwrap();
        assert_eq!(read, p);
    }
    let err = serde_json::from_value::<Protocol>("spdy".into()).unwrap_err();
    assert!(
        err.to_string()
            .contains("`spdy`: expected one of http1, http2")
    );
}
