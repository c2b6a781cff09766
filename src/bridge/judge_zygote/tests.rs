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
    let no_arguments = [&b"\0\0/\0\0"[..], b"000\0", b"0\0"].concat();
    assert!(Request::decode(&no_arguments).is_none());
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
