//! The application behind the `server` scenario: routes, the page builder and
//! the bounded cache shared by the worker threads.
//!
//! Why it is shaped this way: the reported case is a threaded Ruby app whose
//! RSS grew with glibc's per-thread arenas. What makes arenas grow is memory
//! allocated on one thread and freed on another, plus short-lived garbage of
//! many sizes. So pages are built from many small strings (garbage), cached
//! pages are shared between threads through `Arc` (the last holder frees
//! them, on any thread), and the cache evicts in clock order, not LIFO, so an
//! eviction frees a block some other thread allocated long ago.

use super::server_http::{Request, Response};
use super::Rng;
use allocscope_report::svg::escape;
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// Settings the routes need, fixed at start-up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AppConfig {
    pub seed: u64,
    pub response_max_bytes: usize,
}

/// The smallest `/item` page, unless `--response-kib` is smaller still.
const RESPONSE_MIN_BYTES: usize = 1024;

pub(crate) struct App {
    config: AppConfig,
    cache: Cache,
}

impl App {
    pub fn new(config: AppConfig, cache_entries: usize) -> App {
        App {
            config,
            cache: Cache::new(cache_entries),
        }
    }

    /// Answers one parsed request. HEAD is answered as GET; the caller leaves
    /// the body out.
    pub fn handle(&self, request: &Request) -> Response {
        if request.method != "GET" && request.method != "HEAD" {
            return Response::text(405, "method not allowed\n");
        }
        let path = request.path.as_str();
        if path == "/" {
            return Response::new(200, "text/html; charset=utf-8", index_page(request));
        }
        if path == "/health" {
            return Response::text(200, "ok");
        }
        if let Some(id) = path.strip_prefix("/item/") {
            if let Ok(id) = id.parse::<u64>() {
                let page = self.item(id);
                return Response::new(200, "text/html; charset=utf-8", page.as_bytes());
            }
        }
        Response::text(404, "not found\n")
    }

    /// The page for `id`: from the cache, or built and inserted.
    fn item(&self, id: u64) -> Arc<String> {
        if let Some(page) = self.cache.get(id) {
            return page;
        }
        let page = Arc::new(item_page(self.config, id));
        self.cache.insert(id, Arc::clone(&page));
        page
    }

    #[cfg(test)]
    pub(crate) fn cache_len(&self) -> usize {
        self.cache.len()
    }
}

fn index_page(request: &Request) -> String {
    let agent = request.header("user-agent").unwrap_or("unknown");
    let query = request.query.as_deref().unwrap_or("");
    format!(
        "<!doctype html>\n<html><head><title>allocscope server</title></head>\n\
         <body><h1>allocscope server scenario</h1>\n\
         <p>Try <a href=\"/item/1\">/item/1</a> or <a href=\"/health\">/health</a>.</p>\n\
         <p>You are {}; you asked for \"{}\".</p></body></html>\n",
        escape(agent),
        escape(query)
    )
}

/// The page size for `id`: from `RESPONSE_MIN_BYTES` to the maximum, skewed
/// towards small (most pages of a web app are small, a few are large).
pub(crate) fn item_size(config: AppConfig, rng: &mut Rng) -> usize {
    let max = config.response_max_bytes.max(1);
    let min = RESPONSE_MIN_BYTES.min(max);
    let unit = rng.below(1 << 20) as f64 / (1u64 << 20) as f64;
    min + ((max - min) as f64 * unit * unit) as usize
}

/// Builds the page for `id` from many small pieces (one `String` per row, as
/// a template engine would), deterministic in (seed, id) so that a cached and
/// a freshly built page are the same bytes under every allocator.
pub(crate) fn item_page(config: AppConfig, id: u64) -> String {
    let mut rng = Rng::new(config.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let target = item_size(config, &mut rng);
    const WORDS: [&str; 12] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima",
    ];
    let header = format!("<!doctype html>\n<html><body><h1>item {id}</h1><ul>\n");
    let footer = "</ul></body></html>\n";
    let mut rows: Vec<String> = Vec::new();
    let mut used = header.len() + footer.len();
    let mut row_number = 0u64;
    while used < target {
        let mut row = String::new();
        let _ = write!(row, "<li id=\"r{row_number}\">");
        for _ in 0..1 + rng.below(8) {
            row.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            row.push(' ');
        }
        row.push_str("</li>\n");
        used += row.len();
        rows.push(row);
        row_number += 1;
    }
    let mut page = String::with_capacity(used);
    page.push_str(&header);
    for row in &rows {
        page.push_str(row);
    }
    page.push_str(footer);
    // The last row overshoots; cut it so the size is what the RNG chose
    // (the text is ASCII, so any byte index is a char boundary).
    page.truncate(target.max(header.len()));
    page
}

/// A bounded map with clock (second-chance) eviction: an entry read since
/// the hand last passed survives one more round. Approximates LRU without
/// a list update on every hit, and frees entries in roughly insertion order
/// (not LIFO), so a freed page was usually allocated by another thread.
pub struct Cache {
    capacity: usize,
    inner: Mutex<CacheInner>,
}

struct CacheInner {
    map: HashMap<u64, CacheEntry>,
    /// Keys in clock order; the front is under the hand.
    clock: VecDeque<u64>,
}

struct CacheEntry {
    page: Arc<String>,
    referenced: bool,
}

impl Cache {
    pub fn new(capacity: usize) -> Cache {
        Cache {
            capacity,
            inner: Mutex::new(CacheInner {
                map: HashMap::new(),
                clock: VecDeque::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheInner> {
        // A worker that panicked mid-update leaves a consistent enough map
        // for a workload; keep serving rather than cascade the panic.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, key: u64) -> Option<Arc<String>> {
        let mut inner = self.lock();
        let entry = inner.map.get_mut(&key)?;
        entry.referenced = true;
        Some(Arc::clone(&entry.page))
    }

    pub fn insert(&self, key: u64, page: Arc<String>) {
        if self.capacity == 0 {
            return;
        }
        // Evicted pages are dropped after the lock is released: freeing a
        // large page should not stall the other workers.
        let mut evicted = Vec::new();
        {
            let mut inner = self.lock();
            if inner.map.contains_key(&key) {
                return; // another worker built it at the same time
            }
            while inner.map.len() >= self.capacity {
                let Some(candidate) = inner.clock.pop_front() else {
                    break;
                };
                let second_chance = match inner.map.get_mut(&candidate) {
                    Some(entry) if entry.referenced => {
                        entry.referenced = false;
                        true
                    }
                    _ => false,
                };
                if second_chance {
                    inner.clock.push_back(candidate);
                } else if let Some(entry) = inner.map.remove(&candidate) {
                    evicted.push(entry.page);
                }
            }
            inner.map.insert(
                key,
                CacheEntry {
                    page,
                    referenced: false,
                },
            );
            inner.clock.push_back(key);
        }
        drop(evicted);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: AppConfig = AppConfig {
        seed: 7,
        response_max_bytes: 64 * 1024,
    };

    fn page(text: &str) -> Arc<String> {
        Arc::new(text.to_owned())
    }

    #[test]
    fn item_pages_are_deterministic_and_within_bounds() {
        for id in 0..200 {
            let a = item_page(CONFIG, id);
            assert_eq!(a, item_page(CONFIG, id));
            assert!((1024..=64 * 1024).contains(&a.len()), "{id}: {}", a.len());
            assert!(a.starts_with(&format!("<!doctype html>\n<html><body><h1>item {id}</h1>")));
        }
        let other = AppConfig { seed: 8, ..CONFIG };
        assert_ne!(item_page(CONFIG, 3), item_page(other, 3));
    }

    #[test]
    fn item_sizes_vary_and_skew_small() {
        let sizes: Vec<usize> = (0..1000).map(|id| item_page(CONFIG, id).len()).collect();
        let small = sizes.iter().filter(|&&s| s < 16 * 1024).count();
        let large = sizes.iter().filter(|&&s| s > 48 * 1024).count();
        assert!(small > 400, "{small}");
        assert!(large > 20, "{large}");
    }

    #[test]
    fn cache_stays_bounded_and_evicts_unreferenced_first() {
        let cache = Cache::new(3);
        for key in 1..=3 {
            cache.insert(key, page("x"));
        }
        assert!(cache.get(1).is_some()); // 1 gets a second chance
        cache.insert(4, page("y"));
        assert_eq!(cache.len(), 3);
        assert!(cache.get(1).is_some());
        assert!(cache.get(2).is_none(), "2 was the oldest unreferenced");
        assert!(cache.get(3).is_some());
        assert!(cache.get(4).is_some());
    }

    #[test]
    fn zero_capacity_cache_holds_nothing() {
        let cache = Cache::new(0);
        cache.insert(1, page("x"));
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn routes_answer_as_documented() {
        let app = App::new(CONFIG, 10);
        let get = |path: &str| {
            let text = format!("GET {path} HTTP/1.1\r\nUser-Agent: <t>\r\n\r\n");
            let request = super::super::server_http::parse_head(&text).expect("parses");
            app.handle(&request)
        };
        assert_eq!(get("/health").body, b"ok");
        let index = get("/");
        assert_eq!(index.status, 200);
        assert!(String::from_utf8_lossy(&index.body).contains("&lt;t&gt;"));
        assert_eq!(get("/item/5").body, item_page(CONFIG, 5).into_bytes());
        assert_eq!(app.cache_len(), 1);
        assert_eq!(get("/item/5?x=1").status, 200);
        assert_eq!(app.cache_len(), 1);
        assert_eq!(get("/item/abc").status, 404);
        assert_eq!(get("/nowhere").status, 404);
    }
}
