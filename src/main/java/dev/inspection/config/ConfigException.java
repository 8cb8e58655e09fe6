package dev.inspection.config;

/** A configuration problem that stops start-up; the message names the key and says what to do. */
public class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }
}
