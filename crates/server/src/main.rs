//! The `tierdb` binary: command-line parsing only; everything else is in the library.
//!
//! Owns: the `tierdb serve` command line (`--config`, `--print-config`, one flag per setting).
//! Must never: hold server logic (that is `tierdb_server::serve`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Many session threads allocate small buffers per statement; mimalloc's thread-local heaps
/// avoid the contention glibc malloc showed in profiles (~25 % of CPU in `oltp_read_only`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use tierdb_server::config::{Config, ConfigFlags};

#[derive(Parser)]
#[command(
    name = "tierdb",
    version,
    about = "A MySQL-protocol OLTP database with a tiered (DRAM / SSD / durable disk) buffer pool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server (defaults: 127.0.0.1:3306, data under ./tierdb-data/, user root without password).
    Serve {
        /// TOML config file; flags override its values.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print the effective configuration as TOML and exit.
        #[arg(long)]
        print_config: bool,
        #[command(flatten)]
        settings: ConfigFlags,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            config,
            print_config,
            settings,
        } => {
            let cfg = match Config::load(config.as_deref(), &settings) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("tierdb: {e}");
                    return ExitCode::from(2);
                }
            };
            if print_config {
                print!("{}", cfg.to_toml());
                return ExitCode::SUCCESS;
            }
            tierdb_server::serve::init_logging(&cfg.log);
            match tierdb_server::serve::run(cfg) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e:#}");
                    eprintln!("tierdb: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
