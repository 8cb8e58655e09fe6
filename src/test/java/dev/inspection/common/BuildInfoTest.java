package dev.inspection.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class BuildInfoTest {
  private static Properties props(String version, String commit) {
    Properties p = new Properties();
    if (version != null) p.setProperty("version", version);
    if (commit != null) p.setProperty("commit", commit);
    return p;
  }

  @Test
  void theBuildsValuesAreReadAsWritten() {
    assertEquals(new BuildInfo("1.2.0", "0123456789ab"), BuildInfo.of(props("1.2.0", "0123456789ab")));
    assertEquals("inspection-node 1.2.0 (commit 0123456789ab-dirty)", new BuildInfo("1.2.0", "0123456789ab-dirty").line());
  }

  @Test
  void missingBlankOrUnfilteredValuesFallBackToDevAndUnknown() {
    assertEquals(new BuildInfo("dev", "unknown"), BuildInfo.of(props(null, null)));
    assertEquals(new BuildInfo("dev", "unknown"), BuildInfo.of(props(" ", "")));
    assertEquals(new BuildInfo("dev", "unknown"), BuildInfo.of(props("${project.version}", "${build.commit}")));
  }

  @Test
  void theBuildWroteThisJarsVersionAndCommit() {
    // target/classes/build-info.properties comes from the build (pom.xml, maven-antrun-plugin)
    BuildInfo b = BuildInfo.current();
    assertFalse(b.version().equals("dev"), "build-info.properties is missing from the class path: " + b);
    assertFalse(b.commit().isBlank(), b.toString());
  }
}
