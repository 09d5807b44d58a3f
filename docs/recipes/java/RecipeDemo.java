import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Map;

/**
 * Runs the recipes' bodies against a live {@code webdup serve}, one
 * check-and-insert per page, in order:
 *
 * <pre>
 * java RecipeDemo [--token TOKEN] http://127.0.0.1:8080 URL1 FILE1.html [URL2 FILE2.html ...]
 * </pre>
 *
 * and prints a line per page, tab-separated:
 * {@code URL new|duplicate SIGNATURE-URL SIGNATURE-MD5 DUPLICATE_OF JACCARD}
 * ("-" for a new page's DUPLICATE_OF and JACCARD), from
 * {@link RecipeLogic#metadata} (StormCrawler) and {@link RecipeLogic#signature}
 * (Nutch). Errors go to stderr with exit status 1.
 */
public final class RecipeDemo {
    public static void main(String[] args) throws Exception {
        int a = 0;
        String token = System.getenv("WEBDUP_TOKEN");
        if (args.length > 1 && args[0].equals("--token")) {
            token = args[1];
            a = 2;
        }
        if (args.length - a < 3 || (args.length - a - 1) % 2 != 0) {
            System.err.println("usage: RecipeDemo [--token TOKEN] BASE_URL URL FILE.html [URL FILE.html ...]");
            System.exit(2);
        }
        WebdupClient client = new WebdupClient(args[a], token, Duration.ofSeconds(30));
        try {
            for (int k = a + 1; k < args.length; k += 2) {
                String url = args[k];
                String html = new String(Files.readAllBytes(Paths.get(args[k + 1])), StandardCharsets.UTF_8);
                WebdupClient.Result r = client.checkAndInsert(url, html);
                Map<String, String> md = RecipeLogic.metadata(url, r);
                System.out.println(String.join("\t",
                    url,
                    "true".equals(md.get(RecipeLogic.KEY_NEW)) ? "new" : "duplicate",
                    RecipeLogic.representative(url, r),
                    RecipeLogic.hex(RecipeLogic.signature(url, r)),
                    md.getOrDefault(RecipeLogic.KEY_DUPLICATE_OF, "-"),
                    md.getOrDefault(RecipeLogic.KEY_JACCARD, "-")));
            }
        } catch (WebdupClient.WebdupException e) {
            System.err.println("RecipeDemo: " + e.getMessage());
            System.exit(1);
        }
    }
}
