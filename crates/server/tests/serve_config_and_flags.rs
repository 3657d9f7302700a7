//! `tierdb serve` configuration through the real binary: file + flags merge, size suffixes,
//! unknown keys, non-loopback binds.

mod common;

use std::time::Duration;

use common::{run_program, BIN};

fn serve(args: &[&str]) -> (bool, String, String) {
    let mut all = vec!["serve".to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    run_program(BIN, &all, Duration::from_secs(30))
}

#[test]
fn defaults_print_as_toml() {
    let (ok, out, err) = serve(&["--print-config"]);
    assert!(ok, "{err}");
    for line in [
        "bind = \"127.0.0.1\"",
        "port = 3306",
        "data_dir = \"./tierdb-data/data\"",
        "redo_dir = \"./tierdb-data/redo\"",
        "buffer_pool_size = \"128M\"",
        "max_connections = 1024",
        "[[users]]",
        "name = \"root\"",
    ] {
        assert!(
            out.lines().any(|l| l == line),
            "missing `{line}` in:\n{out}"
        );
    }
}

#[test]
fn flags_override_the_file_and_sizes_take_suffixes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tierdb.toml");
    std::fs::write(
        &file,
        "port = 3307\nbuffer_pool_size = \"1G\"\nmax_allowed_packet = 16777216\nlock_wait_timeout = 5\n\n[[users]]\nname = \"app\"\npassword = \"pw\"\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (ok, out, err) = serve(&[
        "--config",
        f,
        "--port",
        "3308",
        "--buffer-pool-size",
        "512M",
        "--print-config",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("port = 3308\n"), "{out}");
    assert!(out.contains("buffer_pool_size = \"512M\"\n"), "{out}");
    assert!(out.contains("max_allowed_packet = \"16M\"\n"), "{out}");
    assert!(out.contains("lock_wait_timeout = 5\n"), "{out}");
    assert!(out.contains("name = \"app\""), "{out}");
    assert!(!out.contains("pw\""), "plaintext password printed:\n{out}");
    let (ok, out, _) = serve(&["--buffer-pool-size", "134217728", "--print-config"]);
    assert!(ok && out.contains("buffer_pool_size = \"128M\"\n"), "{out}");
    let (ok, _, err) = serve(&["--buffer-pool-size", "12X", "--print-config"]);
    assert!(!ok && err.contains("12X"), "{err}");
}

#[test]
fn unknown_config_key_is_an_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tierdb.toml");
    std::fs::write(&file, "port = 3307\nbufer_pool_size = \"1G\"\n").unwrap();
    let (ok, _, err) = serve(&["--config", file.to_str().unwrap(), "--print-config"]);
    assert!(!ok);
    assert!(err.contains("bufer_pool_size"), "{err}");
    let (ok, _, err) = serve(&["--config", "/nonexistent/tierdb.toml"]);
    assert!(!ok && err.contains("/nonexistent/tierdb.toml"), "{err}");
}

#[test]
fn non_loopback_bind_is_refused_without_allow_remote() {
    let (ok, _, err) = serve(&["--bind", "0.0.0.0"]);
    assert!(!ok);
    assert!(err.contains("allow_remote"), "{err}");
    let (ok, out, err) = serve(&["--bind", "0.0.0.0", "--allow-remote", "--print-config"]);
    assert!(ok, "{err}");
    assert!(out.contains("allow_remote = true"), "{out}");
    let (ok, _, err) = serve(&["--flush-log-at-trx-commit", "3", "--print-config"]);
    assert!(!ok && err.contains("flush_log_at_trx_commit"), "{err}");
}
