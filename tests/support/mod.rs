//! Shared by integration tests that need a real HTTP server.

/// Serves `app` on 127.0.0.1 at a port the OS chooses, from a thread with its
/// own runtime, and returns the port once the listener is bound.
pub fn serve_on_loopback(app: axum::Router) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("test runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
            tx.send(listener.local_addr().expect("bound address").port()).expect("port to the test");
            axum::serve(listener, app).await.expect("serve");
        });
    });
    rx.recv().expect("server started")
}
