//! Webhook sender benchmark (issue 37, "webhooks fair and bounded"). Run in release:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin webhook-bench -- sqlite 5000
//! INLET_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo run --release -p inlet-tests --bin webhook-bench -- postgres 5000
//! ```
//!
//! Queues N deliveries to one webhook and to ten webhooks at a loopback endpoint that answers
//! at once ([`inlet_tests::hooks::endpoint`]), through a real server's sender, and prints the
//! deliveries per second each reached: the sender's own throughput, the endpoint being free.

use std::time::{Duration, Instant};

use inlet_core::{
    time,
    webhook::{Delivery, Event, Webhook},
};
use inlet_server::Settings;
use inlet_tests::{TestServer, bench::database};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("sqlite");
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5000);
    let (url, label, _cleanup) = database(which).await;
    let settings = Settings {
        webhook_allow_private: true,
        ..Settings::default()
    };
    let s = TestServer::start_on(&url, settings).await;
    let admin = s
        .state
        .tokens
        .user_by_email(inlet_tests::ADMIN_EMAIL)
        .await
        .expect("admin")
        .expect("admin");
    println!("# webhook-bench: {label}, {n} deliveries per run\n");
    println!("| webhooks | deliveries | seconds | deliveries/s |");
    println!("|---|---|---|---|");
    for hooks in [1usize, 10] {
        let (port, mut arrivals) = inlet_tests::hooks::endpoint(Duration::ZERO).await;
        let mut made = Vec::new();
        for _ in 0..hooks {
            let hook = Webhook {
                id: uuid::Uuid::new_v4(),
                workspace_id: admin.workspace_id,
                url: format!("http://127.0.0.1:{port}/hook"),
                events: vec![Event::SourceCreated],
                secret: "whsec_bench".into(),
                created_date: time::now(),
                owner: None,
            };
            s.state.webhooks.create_webhook(&hook).await.expect("hook");
            made.push(hook);
        }
        let now = time::now();
        let deliveries: Vec<Delivery> = (0..n)
            .map(|i| {
                let body = format!("{{\"n\":{i}}}");
                Delivery::pending(
                    uuid::Uuid::new_v4(),
                    &made[i % hooks],
                    Event::SourceCreated,
                    body,
                    now,
                )
            })
            .collect();
        for chunk in deliveries.chunks(500) {
            s.state
                .webhooks
                .queue_deliveries(chunk)
                .await
                .expect("queue");
        }
        let started = Instant::now();
        s.state.webhook_wake.notify_one();
        for _ in 0..n {
            tokio::time::timeout(Duration::from_secs(60), arrivals.recv())
                .await
                .expect("deliveries keep arriving")
                .expect("endpoint");
        }
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "| {hooks} | {n} | {seconds:.2} | {:.0} |",
            n as f64 / seconds
        );
        for hook in &made {
            s.state
                .webhooks
                .delete_webhook(admin.workspace_id, hook.id)
                .await
                .expect("delete");
        }
    }
}
