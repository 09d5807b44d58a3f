import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What the StormCrawler and Nutch recipes (docs/recipes/*.md) do with a
 * {@link WebdupClient.Result}, free of either framework so that it is the
 * code tests/recipes_java.rs runs through RecipeDemo.
 */
public final class RecipeLogic {
    public static final String KEY_NEW = "webdup.new";
    public static final String KEY_DUPLICATE_OF = "webdup.duplicate_of";
    public static final String KEY_JACCARD = "webdup.jaccard";

    private RecipeLogic() {}

    /**
     * The URL of the page's cluster representative: the first copy's (identical, else same text),
     * else the best near match's, else the page's own. Duplicates of a page
     * all name the page that was indexed first.
     */
    public static String representative(String pageUrl, WebdupClient.Result r) {
        WebdupClient.Match copy = r.firstCopy();
        if (copy != null) {
            return copy.url;
        }
        WebdupClient.Match best = r.bestNear();
        return best != null ? best.url : pageUrl;
    }

    /** Jaccard with the representative: the copy's, the best near match's, or NaN for a new page. */
    public static double representativeJaccard(WebdupClient.Result r) {
        WebdupClient.Match copy = r.firstCopy();
        if (copy != null) {
            return copy.jaccard;
        }
        WebdupClient.Match best = r.bestNear();
        return best != null ? best.jaccard : Double.NaN;
    }

    /**
     * StormCrawler: the metadata keys to set on the parsed page. Always
     * {@code webdup.new} ("true"/"false"); for a duplicate also
     * {@code webdup.duplicate_of} (the representative's URL) and
     * {@code webdup.jaccard} (e.g. "0.9412").
     */
    public static Map<String, String> metadata(String pageUrl, WebdupClient.Result r) {
        Map<String, String> md = new LinkedHashMap<>();
        md.put(KEY_NEW, Boolean.toString(r.isNew));
        if (!r.isNew) {
            md.put(KEY_DUPLICATE_OF, representative(pageUrl, r));
            md.put(KEY_JACCARD, String.format(Locale.ROOT, "%.4f", representativeJaccard(r)));
        }
        return md;
    }

    /**
     * Nutch: the signature, the MD5 of the representative's URL (UTF-8), so
     * that a page and its copies share it and DeduplicationJob marks the
     * copies. Hashed rather than the raw URL bytes because Nutch's
     * CrawlDatum stores the signature's length in one signed byte (URLs of
     * 128 bytes or more would not round-trip); 16 bytes, like MD5Signature.
     */
    public static byte[] signature(String pageUrl, WebdupClient.Result r) {
        try {
            return MessageDigest.getInstance("MD5").digest(representative(pageUrl, r).getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has MD5", e);
        }
    }

    /** Lower-case hex, for logs and for RecipeDemo's output. */
    public static String hex(byte[] bytes) {
        StringBuilder b = new StringBuilder(bytes.length * 2);
        for (byte x : bytes) {
            b.append(String.format("%02x", x & 0xff));
        }
        return b.toString();
    }
}
