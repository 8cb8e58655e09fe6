package dev.inspection.state;

/** What one check said about its device: the {@code status} field of the payload. */
public enum CheckStatus {
  UP, DOWN;

  public static CheckStatus of(boolean up) {
    return up ? UP : DOWN;
  }

  /** The status named {@code s} ("UP" or "DOWN", case and surrounding blanks ignored); throws naming the value otherwise. */
  public static CheckStatus parse(String s) {
    if (s != null) {
      String name = s.trim();
      for (CheckStatus v : values()) if (v.name().equalsIgnoreCase(name)) return v;
    }
    throw new IllegalArgumentException("status must be UP or DOWN, got " + (s == null ? "nothing" : "'" + s + "'"));
  }
}
