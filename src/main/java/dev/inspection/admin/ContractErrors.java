package dev.inspection.admin;

import io.vertx.json.schema.OutputUnit;
import io.vertx.openapi.validation.SchemaValidationException;
import io.vertx.openapi.validation.ValidatorErrorType;
import io.vertx.openapi.validation.ValidatorException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a refusal by the API contract ({@link ApiContract}) says: the parameter or body field it concerns,
 * why, and where the contract is, in place of the validator's own sentence.
 */
final class ContractErrors {
  static final String SEE = " (the API contract: GET /api/v1/openapi.yaml)";
  /** How the validator names a parameter in its messages: "... query parameter limit ...". */
  private static final Pattern PARAMETER = Pattern.compile("\\b(query|path|header|cookie) parameter ([^\\s.]+)");
  private static final Pattern REQUIRED_PROPERTY = Pattern.compile("required propert(?:y|ies) \\W*([\\w.-]+)");

  private ContractErrors() {}

  /** The message of the 400 for a request the contract refuses. */
  static String message(ValidatorException e) {
    String text = e.getMessage() == null ? "" : e.getMessage();
    Matcher p = PARAMETER.matcher(text);
    boolean missing = e.type() == ValidatorErrorType.MISSING_REQUIRED_PARAMETER;
    if (p.find()) {
      String what = p.group(1) + " parameter '" + Http.printable(p.group(2)) + "'";
      if (missing) return what + " is required" + SEE;
      return what + " is invalid: " + reason(e, text) + SEE;
    }
    if (missing && !(e instanceof SchemaValidationException)) return "this request needs a JSON body" + SEE;
    if (!(e instanceof SchemaValidationException s)) {
      if (text.contains("can't be decoded")) return "the body is not valid JSON: send a JSON object (application/json)";
      return "the request does not match the API contract: " + text + SEE;
    }
    OutputUnit unit = mostRelevant(s.getOutputUnit());
    String field = field(unit == null ? null : unit.getInstanceLocation());
    String why = unit == null || unit.getError() == null ? text : unit.getError();
    Matcher r = REQUIRED_PROPERTY.matcher(why);
    if (r.find()) {
      String name = (field == null ? "" : field + ".") + r.group(1);
      return "body field '" + Http.printable(name) + "' is required" + SEE;
    }
    if (field != null && unit.getKeywordLocation() != null && unit.getKeywordLocation().endsWith("additionalProperties")) {
      return "body field '" + Http.printable(field) + "' is not accepted here: send only the fields the contract lists" + SEE;
    }
    return (field == null ? "the body" : "body field '" + Http.printable(field) + "'") + " is invalid: " + why + SEE;
  }

  /** The schema's reason for a parameter's refusal, without the validator's preamble. */
  private static String reason(ValidatorException e, String text) {
    if (e instanceof SchemaValidationException s) {
      OutputUnit unit = mostRelevant(s.getOutputUnit());
      if (unit != null && unit.getError() != null) return unit.getError();
    }
    int at = text.indexOf("Reason: ");
    return at < 0 ? text : text.substring(at + 8);
  }

  /**
   * The error a reader can act on: the one deepest into the value (an array entry's own type rather than
   * its parent's "does not match"), then deepest into the schema (the keyword that failed, "maximum",
   * rather than "properties"); the first of those.
   */
  private static OutputUnit mostRelevant(OutputUnit unit) {
    if (unit == null) return null;
    List<OutputUnit> errors = unit.getErrors();
    if (errors == null || errors.isEmpty()) return unit;
    OutputUnit best = errors.get(0);
    for (OutputUnit e : errors) if (depth(e) > depth(best)) best = e;
    return best;
  }

  private static int depth(OutputUnit e) {
    return 1000 * slashes(e.getInstanceLocation()) + slashes(e.getKeywordLocation());
  }

  private static int slashes(String pointer) {
    return pointer == null ? 0 : (int) pointer.chars().filter(c -> c == '/').count();
  }

  /** A JSON pointer into the body ("#/ids/0", "/slots") as a field name ("ids.0", "slots"); null for the body itself. */
  static String field(String instanceLocation) {
    if (instanceLocation == null) return null;
    String f = instanceLocation.startsWith("#") ? instanceLocation.substring(1) : instanceLocation;
    while (f.startsWith("/")) f = f.substring(1);
    if (f.isEmpty()) return null;
    return f.replace("/", ".").replace("~1", "/").replace("~0", "~");
  }

  /** Why a contract did not load: every distinct message along the cause chain. */
  static String loadFault(Throwable e) {
    List<String> parts = new ArrayList<>();
    for (Throwable t = e; t != null && parts.size() < 4; t = t.getCause()) {
      String m = (t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage().strip()).replaceAll("\\.$", "");
      if (parts.stream().noneMatch(x -> x.contains(m))) parts.add(m);
    }
    String all = String.join(": ", parts);
    return all.length() > 600 ? all.substring(0, 600) + "..." : all;
  }
}
