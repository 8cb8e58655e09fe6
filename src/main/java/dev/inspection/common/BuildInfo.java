package dev.inspection.common;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * What this jar was built from: the project version and the git commit, written by the build into
 * {@code build-info.properties} (pom.xml, maven-antrun-plugin). A class run from an IDE without that
 * file says {@code dev} / {@code unknown}; a commit with uncommitted changes ends in {@code -dirty}.
 */
public record BuildInfo(String version, String commit) {
  static final String RESOURCE = "/build-info.properties";

  private static final BuildInfo CURRENT = read();

  /** Read once from the class path. */
  public static BuildInfo current() {
    return CURRENT;
  }

  /** The two values, defaulted when missing, blank or left unfiltered ({@code ${...}}). */
  static BuildInfo of(Properties p) {
    return new BuildInfo(clean(p.getProperty("version"), "dev"), clean(p.getProperty("commit"), "unknown"));
  }

  private static String clean(String v, String fallback) {
    return v == null || v.isBlank() || v.contains("${") ? fallback : v.trim();
  }

  /** {@code inspection-node 0.1.0 (commit 1a2b3c4d5e6f)}, as {@code --version} prints it. */
  public String line() {
    return "inspection-node " + version + " (commit " + commit + ")";
  }

  private static BuildInfo read() {
    Properties p = new Properties();
    try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
      if (in != null) p.load(in);
    } catch (IOException e) {
      // an unreadable resource is the same as none: the defaults say so
    }
    return of(p);
  }
}
