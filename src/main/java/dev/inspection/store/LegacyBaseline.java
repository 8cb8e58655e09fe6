package dev.inspection.store;

import java.util.List;
import java.util.Map;

/**
 * Upgrading a schema that the hand-written runner (before Flyway) migrated: its table {@code schema_migrations}
 * holds the versions it applied with the SHA-256 of each file. Flyway takes over with a baseline at the last of
 * them, so it applies only what came after. Pure: the files and their checksums come from the jar.
 */
public final class LegacyBaseline {
  private LegacyBaseline() {}

  /** A file of the jar's migrations: version (e.g. {@code V011}) and the SHA-256 of its text. */
  public record File(String version, String sha256) {}

  /**
   * The version Flyway baselines at (without the {@code V}, e.g. {@code 011}), or null when the old table is empty
   * (nothing to baseline: Flyway migrates from the start). The applied versions must be a prefix of {@code files}
   * with unchanged checksums, as the old runner enforced; anything else is refused with the reason.
   */
  public static String baselineVersion(List<File> files, Map<String, String> applied, String schema) {
    if (applied.isEmpty()) return null;
    int n = applied.size();
    if (n > files.size()) {
      throw new IllegalStateException("schema " + schema + ": the old migration table schema_migrations lists " + n
          + " migrations, this jar has " + files.size() + ": it is older than the schema; use the newer jar");
    }
    for (int i = 0; i < files.size(); i++) {
      File f = files.get(i);
      String sum = applied.get(f.version());
      if (i < n && sum == null) {
        throw new IllegalStateException("schema " + schema + ": the old migration table schema_migrations lacks " + f.version()
            + " but lists later ones " + applied.keySet() + ": it was not written by this platform's runner; repair it by hand");
      }
      if (sum != null && !sum.equals(f.sha256())) {
        throw new IllegalStateException("schema " + schema + ": migration " + f.version() + " in schema_migrations has another checksum"
            + " than this jar's file: the file was changed after it was applied; restore it and add a new migration instead");
      }
    }
    return files.get(n - 1).version().substring(1);
  }
}
