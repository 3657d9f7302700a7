//! Fuzz-style property tests: arbitrary bytes fed to the connection state machine (framing,
//! handshake, command dispatch, parameter decoding) with the echo backend never panic, and
//! every reply the server writes is well framed.

use std::net::{IpAddr, Ipv4Addr};

use proptest::prelude::*;
use tierdb_server::protocol::{self, testing::EchoService};

const PEER: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn frame(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = (payload.len() as u32).to_le_bytes().to_vec();
    h[3] = seq;
    h.extend_from_slice(payload);
    h
}

fn login(db: bool) -> Vec<u8> {
    let caps: u32 = 1 | 4 | 512 | 8192 | 32768 | (1 << 19) | if db { 8 } else { 0 };
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(b"root\0\0");
    if db {
        p.extend_from_slice(b"test\0");
    }
    p.extend_from_slice(b"mysql_native_password\0");
    frame(1, &p)
}

/// Checks the server's output parses as a sequence of packets.
fn assert_well_framed(out: &[u8]) {
    let mut rest = out;
    while !rest.is_empty() {
        assert!(rest.len() >= 4, "dangling header bytes");
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], 0]) as usize;
        assert!(rest.len() >= 4 + len, "truncated packet in output");
        rest = &rest[4 + len..];
    }
}

fn run(input: &[u8], max_packet: Option<u64>) -> Vec<u8> {
    let service = EchoService {
        max_packet_bytes: max_packet,
        ..EchoService::default()
    };
    let mut out = Vec::new();
    let _ = protocol::serve(&service, input, &mut out, 1, PEER, |_, _| {});
    assert_well_framed(&out);
    out
}

/// A command byte weighted towards the ones with bodies worth decoding.
fn command() -> impl Strategy<Value = u8> {
    prop_oneof![
        Just(0x03u8),
        Just(0x04),
        Just(0x16),
        Just(0x17),
        Just(0x18),
        Just(0x19),
        Just(0x1a),
        Just(0x1b),
        Just(0x11),
        Just(0x1f),
        any::<u8>(),
    ]
}

fn commands() -> impl Strategy<Value = Vec<(u8, Vec<u8>)>> {
    prop::collection::vec(
        (command(), prop::collection::vec(any::<u8>(), 0..64)),
        0..12,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn raw_bytes_in_place_of_a_handshake(input in prop::collection::vec(any::<u8>(), 0..512)) {
        run(&input, None);
    }

    #[test]
    fn raw_bytes_after_a_login(db in any::<bool>(), tail in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut input = login(db);
        input.extend_from_slice(&tail);
        run(&input, Some(256));
    }

    #[test]
    fn framed_commands_with_random_bodies(db in any::<bool>(), cmds in commands()) {
        let mut input = login(db);
        // Prepare a statement with two parameters first, so execute bodies can hit id 1.
        input.extend_from_slice(&frame(0, b"\x16select ?, ?"));
        for (cmd, body) in &cmds {
            let mut payload = vec![*cmd];
            if matches!(*cmd, 0x17..=0x1a) && body.len() >= 4 && body[0] % 2 == 0 {
                // Half of the statement commands address the prepared statement.
                payload.extend_from_slice(&1u32.to_le_bytes());
                payload.extend_from_slice(&body[4..]);
            } else {
                payload.extend_from_slice(body);
            }
            input.extend_from_slice(&frame(0, &payload));
        }
        run(&input, None);
    }
}
