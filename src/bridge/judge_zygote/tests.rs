use super::*;

#[test]
fn a_request_reads_back_as_it_was_sent() {
    let c = |s: &str| CString::new(s).unwrap();
    let request = Request {
        inherit: Some(57),
        file_size: Some(1 << 28),
        dir: c("/tmp/trial/tmp"),
        space: Some(c("/tmp/trial/tmp")),
        args: vec![c("/judge"), c("--exact"), c("step1::x"), c("")],
        env: vec![c("A=b=c"), c("EMPTY=")],
        namespaces: [true, true, false],
    };
    let back = Request::decode(&request.encode()).expect("a request");
    assert_eq!(back.inherit, Some(57));
    assert_eq!(back.file_size, Some(1 << 28));
    assert_eq!((&back.dir, &back.space), (&request.dir, &request.space));
    assert_eq!((&back.args, &back.env), (&request.args, &request.env));
    assert_eq!(back.namespaces, [true, true, false]);
    let none = Request {
        inherit: None,
        file_size: None,
        space: None,
        env: vec![],
        namespaces: [false; 3],
        ..back
    };
    let again = Request::decode(&none.encode()).expect("a request");
    assert_eq!(
        (again.inherit, again.file_size, again.space),
        (None, None, None)
    );
    assert!(again.env.is_empty());
    // Not a request: cut short, or no arguments.
    let bytes = none.encode();
    assert!(Request::decode(&bytes[..bytes.len() / 2]).is_none());
    let no_arguments = br#"{"inherit":null,"file_size":null,"dir":"/","space":null,"args":[],"env":[],"namespaces":[false,false,false]}"#;
    assert!(Request::decode(no_arguments).is_none());
}

/// A byte string that is not UTF-8 (an argument, a variable, a path) comes
/// back byte for byte; one that is travels as a JSON string.
#[test]
fn byte_strings_that_are_not_utf8_read_back_as_they_were() {
    let raw = |b: &[u8]| CString::new(b).unwrap();
    let request = Request {
        inherit: None,
        file_size: None,
        dir: raw(b"/tmp/caf\xe9"),
        space: Some(raw(b"\xff\xfe")),
        args: vec![raw(b"/judge"), raw(b"\x80 \x01")],
        env: vec![raw(b"LANG=\xc3"), raw(b"HOME=/h")],
        namespaces: [false; 3],
    };
    let bytes = request.encode();
    let text = String::from_utf8(bytes.clone()).expect("JSON is UTF-8");
    assert!(text.contains(r#""/judge""#), "{text}");
    let back = Request::decode(&bytes).expect("a request");
    assert_eq!((&back.dir, &back.space), (&request.dir, &request.space));
    assert_eq!((&back.args, &back.env), (&request.args, &request.env));
}

/// Whatever the bytes, `decode` answers: cut short anywhere, a byte changed
/// anywhere, a NUL inside a string, a descriptor below zero, too many
/// arguments, bytes out of range, nesting deep: each refused, none a panic.
#[test]
fn malformed_or_hostile_requests_are_refused_without_a_panic() {
    let c = |s: &str| CString::new(s).unwrap();
    let request = Request {
        inherit: Some(3),
        file_size: Some(1),
        dir: c("/d"),
        space: Some(c("/s")),
        args: vec![c("/judge"), c("a")],
        env: vec![c("A=b")],
        namespaces: [true, true, true],
    };
    let bytes = request.encode();
    for cut in 0..bytes.len() {
        assert!(Request::decode(&bytes[..cut]).is_none(), "cut at {cut}");
    }
    for at in 0..bytes.len() {
        for byte in [0u8, b'"', b'[', b'}', 0xff] {
            let mut changed = bytes.clone();
            changed[at] = byte;
            let _ = Request::decode(&changed);
        }
    }
    let text = String::from_utf8(bytes).unwrap();
    let hostile = [
        text.replace(r#""/d""#, r#""/d\u0000x""#),
        text.replace(r#""/d""#, "[47,0,100]"),
        text.replace(r#""/d""#, "[47,256]"),
        text.replace(r#""/d""#, "[-1]"),
        text.replace(r#""inherit":3"#, r#""inherit":-1"#),
        text.replace(r#""inherit":3"#, r#""inherit":4294967296"#),
        text.replace(r#""A=b""#, "null"),
        text.replace(
            r#""args":["/judge","a"]"#,
            &format!(r#""args":{:?}"#, vec!["a"; 17]),
        ),
        text.replace(r#"true,true,true"#, "true,true"),
        text.replace('{', r#"{"extra":1,"#),
        "[".repeat(100_000),
        "\u{0}".repeat(64),
    ];
    for bytes in &hostile {
        assert!(Request::decode(bytes.as_bytes()).is_none(), "{bytes:.200}");
    }
    // The same request, its bytes as numbers: the one other form it has.
    let numbers = text.replace(r#""/d""#, "[47,100]");
    assert_eq!(
        Request::decode(numbers.as_bytes()).expect("a request").dir,
        c("/d")
    );
}

#[test]
fn what_fits_in_the_room_is_written_after_itself_and_the_rest_zeroed() {
    let mut room = [b'-'; 16];
    let items = [CString::new("ab").unwrap(), CString::new("cde").unwrap()];
    assert_eq!(write_into(&mut room, &items), Some(vec![0, 3]));
    assert_eq!(&room, b"ab\0cde\0\0\0\0\0\0\0\0\0\0");
    let mut small = [b'-'; 6];
    assert_eq!(write_into(&mut small, &items), None);
    assert_eq!(&small, b"------", "nothing written where it does not fit");
}
