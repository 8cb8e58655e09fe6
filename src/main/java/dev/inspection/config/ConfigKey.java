package dev.inspection.config;

/** One documented configuration key: its name, built-in default and what it means. */
public record ConfigKey(String name, String defaultValue, Type type, String help) {

  public enum Type { STRING, INT, LONG, BOOL, DOUBLE }

  /** Environment variable that overrides this key: {@code INSPECT_} + upper-case name, dots and dashes as underscores. */
  public String envName() {
    return "INSPECT_" + name.toUpperCase().replace('.', '_').replace('-', '_');
  }
}
