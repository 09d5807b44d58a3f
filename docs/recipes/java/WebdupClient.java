import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A dependency-free client (Java 11+) for the two calls a crawler needs from
 * {@code webdup serve}: {@code POST /v1/check} and
 * {@code POST /v1/check-and-insert}. Thread-safe: share one per JVM.
 *
 * <pre>
 * WebdupClient c = new WebdupClient("http://127.0.0.1:8080", System.getenv("WEBDUP_TOKEN"),
 *                                   Duration.ofSeconds(10));
 * WebdupClient.Result r = c.checkAndInsert(url, html);
 * </pre>
 */
public final class WebdupClient {

    /**
     * A page of the index that matched: its row id (ids grow as pages are
     * stored: the smaller was stored first), its URL and the exact Jaccard of
     * the shingle sets.
     */
    public static final class Match {
        public final long id;
        public final String url;
        public final double jaccard;

        public Match(long id, String url, double jaccard) {
            this.id = id;
            this.url = url;
            this.jaccard = jaccard;
        }

        @Override
        public String toString() {
            return url + " (" + jaccard + ")";
        }
    }

    /**
     * The answer of /v1/check or /v1/check-and-insert: the matches are what the
     * index held before this page. {@code isNew} is {@code !seen}; {@code id} is
     * the stored row (-1 for /v1/check, which stores nothing).
     */
    public static final class Result {
        public final String url;
        public final boolean seen;
        public final boolean isNew;
        public final long id;
        /** The same decoded page (same bytes). */
        public final List<Match> identical;
        /** The same normalized text, another page. */
        public final List<Match> sameText;
        public final List<Match> near;

        public Result(String url, boolean seen, long id, List<Match> identical, List<Match> sameText, List<Match> near) {
            this.url = url;
            this.seen = seen;
            this.isNew = !seen;
            this.id = id;
            this.identical = Collections.unmodifiableList(identical);
            this.sameText = Collections.unmodifiableList(sameText);
            this.near = Collections.unmodifiableList(near);
        }

        /** The first identical page, else the first of the same text, or null. */
        public Match firstCopy() {
            if (!identical.isEmpty()) {
                return identical.get(0);
            }
            return sameText.isEmpty() ? null : sameText.get(0);
        }

        /** The near match with the highest Jaccard, or null. */
        public Match bestNear() {
            Match best = null;
            for (Match m : near) {
                // Of equally similar pages, the one stored first.
                if (best == null || m.jaccard > best.jaccard || (m.jaccard == best.jaccard && m.id < best.id)) {
                    best = m;
                }
            }
            return best;
        }
    }

    /** A non-2xx answer: the HTTP status and the server's {@code error} message. */
    public static final class WebdupException extends IOException {
        private static final long serialVersionUID = 1L;
        public final int status;
        public final String serverMessage;

        public WebdupException(String endpoint, int status, String serverMessage) {
            super("webdup " + endpoint + ": HTTP " + status + ": " + serverMessage);
            this.status = status;
            this.serverMessage = serverMessage;
        }
    }

    private final String base;
    private final String token;
    private final Duration timeout;
    private final HttpClient http;

    /**
     * @param baseUrl the server, e.g. {@code http://127.0.0.1:8080} (a trailing slash is fine)
     * @param token the bearer token of {@code serve --token}, or null/empty for none
     * @param timeout the connect timeout and each request's timeout
     */
    public WebdupClient(String baseUrl, String token, Duration timeout) {
        this.base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.token = token == null || token.isEmpty() ? null : token;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /** Has this content been seen, under which URLs? Stores nothing. */
    public Result check(String url, String html) throws IOException, InterruptedException {
        return post("/v1/check", url, html);
    }

    /** Checks the page and stores it, in one transaction: of near copies posted together, one is new. */
    public Result checkAndInsert(String url, String html) throws IOException, InterruptedException {
        return post("/v1/check-and-insert", url, html);
    }

    private Result post(String endpoint, String url, String html) throws IOException, InterruptedException {
        String body = "{\"url\":" + Json.quote(url) + ",\"html\":" + Json.quote(html) + "}";
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(base + endpoint))
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (token != null) {
            req.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        int status = resp.statusCode();
        if (status < 200 || status > 299) {
            throw new WebdupException(endpoint, status, errorMessage(resp.body()));
        }
        Object parsed;
        try {
            parsed = Json.parse(resp.body());
        } catch (IllegalArgumentException e) {
            throw new IOException("webdup " + endpoint + ": answer is not JSON: " + e.getMessage(), e);
        }
        if (!(parsed instanceof Map)) {
            throw new IOException("webdup " + endpoint + ": answer is not a JSON object");
        }
        Map<?, ?> o = (Map<?, ?>) parsed;
        Object id = o.get("id");
        return new Result(
            o.get("url") instanceof String ? (String) o.get("url") : url,
            Boolean.TRUE.equals(o.get("seen")),
            id instanceof Double ? ((Double) id).longValue() : -1,
            matches(o.get("identical")),
            matches(o.get("same_text")),
            matches(o.get("near")));
    }

    private static String errorMessage(String body) {
        try {
            Object o = Json.parse(body);
            if (o instanceof Map && ((Map<?, ?>) o).get("error") instanceof String) {
                return (String) ((Map<?, ?>) o).get("error");
            }
        } catch (IllegalArgumentException e) {
            // Not JSON: show the body as it is.
        }
        return body.length() > 200 ? body.substring(0, 200) + "..." : body;
    }

    private static List<Match> matches(Object array) {
        List<Match> out = new ArrayList<>();
        if (array instanceof List) {
            for (Object item : (List<?>) array) {
                if (item instanceof Map) {
                    Map<?, ?> m = (Map<?, ?>) item;
                    Object u = m.get("url");
                    Object j = m.get("jaccard");
                    Object id = m.get("id");
                    if (u instanceof String) {
                        out.add(new Match(id instanceof Double ? ((Double) id).longValue() : -1, (String) u,
                            j instanceof Double ? (Double) j : Double.NaN));
                    }
                }
            }
        }
        return out;
    }

    /** Just enough JSON: objects (as Map), arrays (List), strings, numbers (Double), booleans, null. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            Json p = new Json(text);
            Object v = p.value();
            p.ws();
            if (p.i != text.length()) {
                throw p.error("trailing characters");
            }
            return v;
        }

        static String quote(String v) {
            StringBuilder b = new StringBuilder(v.length() + 16).append('"');
            for (int k = 0; k < v.length(); k++) {
                char c = v.charAt(k);
                switch (c) {
                    case '"': b.append("\\\""); break;
                    case '\\': b.append("\\\\"); break;
                    case '\n': b.append("\\n"); break;
                    case '\r': b.append("\\r"); break;
                    case '\t': b.append("\\t"); break;
                    default:
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                }
            }
            return b.append('"').toString();
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at offset " + i);
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private Object value() {
            ws();
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            if (c == '{') {
                return object();
            } else if (c == '[') {
                return array();
            } else if (c == '"') {
                return string();
            } else if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            } else if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            } else if (s.startsWith("null", i)) {
                i += 4;
                return null;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                int start = i;
                while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                    i++;
                }
                try {
                    return Double.valueOf(s.substring(start, i));
                } catch (NumberFormatException e) {
                    throw error("bad number");
                }
            }
            throw error("unexpected '" + c + "'");
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            i++; // {
            ws();
            if (i < s.length() && s.charAt(i) == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                if (i >= s.length() || s.charAt(i) != '"') {
                    throw error("expected a key");
                }
                String k = string();
                ws();
                if (i >= s.length() || s.charAt(i) != ':') {
                    throw error("expected ':'");
                }
                i++;
                m.put(k, value());
                ws();
                if (i < s.length() && s.charAt(i) == ',') {
                    i++;
                } else if (i < s.length() && s.charAt(i) == '}') {
                    i++;
                    return m;
                } else {
                    throw error("expected ',' or '}'");
                }
            }
        }

        private List<Object> array() {
            List<Object> l = new ArrayList<>();
            i++; // [
            ws();
            if (i < s.length() && s.charAt(i) == ']') {
                i++;
                return l;
            }
            while (true) {
                l.add(value());
                ws();
                if (i < s.length() && s.charAt(i) == ',') {
                    i++;
                } else if (i < s.length() && s.charAt(i) == ']') {
                    i++;
                    return l;
                } else {
                    throw error("expected ',' or ']'");
                }
            }
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++; // opening quote
            while (i < s.length()) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (i >= s.length()) {
                    break;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            throw error("bad \\u escape");
                        }
                        try {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("bad \\u escape");
                        }
                        i += 4;
                        break;
                    default: b.append(e); // \" \\ \/
                }
            }
            throw error("unterminated string");
        }
    }
}
