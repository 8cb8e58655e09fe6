package dev.inspection.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masking of secrets wherever text may be printed: the values of secret keys ({@link Config#isSecret})
 * and the password in a URL's user-info ({@code redis://user:pass@host -> redis://user:***@host}).
 * {@link #redact} is applied to every log line ({@link MaskingConverter}) and to start-up errors.
 */
public final class Secrets {
  private Secrets() {}

  public static final String MASK = "***";

  /** scheme://userinfo@ — the user-info runs to the last '@' of the authority (a raw '@' in a password stays inside the mask). */
  private static final Pattern USER_INFO = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://)([^/\\s?#]*)@");

  /** The value as it may be shown: secret keys masked whole (when set), URLs with their user-info password masked. */
  public static String show(String key, String value) {
    if (value == null) return null;
    if (Config.isSecret(key)) return value.isEmpty() ? "" : MASK;
    return redact(value);
  }

  /** Text with the password of every URL user-info in it masked; a user-info without ':' (a bare token) is masked whole. */
  public static String redact(String text) {
    if (text == null || text.indexOf("://") < 0) return text;
    Matcher m = USER_INFO.matcher(text);
    StringBuilder out = new StringBuilder(text.length());
    while (m.find()) {
      String info = m.group(2);
      int colon = info.indexOf(':');
      String masked = colon >= 0 ? info.substring(0, colon) + ":" + MASK : MASK;
      m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + masked + "@"));
    }
    m.appendTail(out);
    return out.toString();
  }
}
