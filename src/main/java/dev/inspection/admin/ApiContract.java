package dev.inspection.admin;

import dev.inspection.common.ApiError;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.validation.RequestParameter;
import io.vertx.openapi.validation.RequestUtils;
import io.vertx.openapi.validation.RequestValidator;
import io.vertx.openapi.validation.ValidatableRequest;
import io.vertx.openapi.validation.ValidatedRequest;
import io.vertx.openapi.validation.ValidatorException;
import java.util.Map;

/**
 * The API contract ({@code openapi.yaml}, issue 15 item 6), loaded when the HTTP server starts: a file that
 * is not valid OpenAPI stops the start with a message. Every {@code /api/v1} request the contract describes
 * is validated against it after {@link ApiAuth} and the body handler, before its route: parameters and JSON
 * bodies by their schemas; a refusal is a 400 in the API's error shape that names the parameter or body
 * field ({@link ContractErrors}). A route reads the validated values and the contract's defaults through
 * {@link #query}. What a schema cannot say (a device that must exist, a profile the code knows, from before
 * to) the routes still check.
 *
 * <p>Bodies are read as JSON whatever their Content-Type says (the API speaks only JSON; {@code curl -d}
 * sends a form type; {@link ApiAuth} refuses multipart). An operation marked {@code x-body-checked-by-route}
 * (the import: JSON lines, up to http.import.max.bytes, checked entry by entry) has its parameters validated
 * and its body left to the route.
 */
final class ApiContract implements Handler<RoutingContext> {
  /** Where the contract lives in the jar (also served as {@code GET /api/v1/openapi.yaml}). */
  static final String RESOURCE = "openapi.yaml";

  private static final String VALIDATED = "contract.validated";
  private static final String OPERATION = "contract.operation";
  private static final String ROUTE_READS_BODY = "x-body-checked-by-route";
  /** What an operation whose body the route checks hands the validator instead of its body. */
  private static final RequestParameter ROUTE_CHECKED = () -> Buffer.buffer("[]");

  private final OpenAPIContract contract;
  private final RequestValidator validator;

  private ApiContract(Vertx vertx, OpenAPIContract contract) {
    this.contract = contract;
    this.validator = RequestValidator.create(vertx, contract);
  }

  /** Reads and checks the contract at {@code path} (a file, else a resource of the jar); fails naming the file and the fault. */
  static Future<ApiContract> load(Vertx vertx, String path) {
    return OpenAPIContract.from(vertx, path).map(c -> new ApiContract(vertx, c)).recover(e -> Future.failedFuture(new IllegalStateException(
        "the API contract " + path + " cannot be loaded: " + ContractErrors.loadFault(e) + ". The HTTP API does not start without it: fix the"
            + " file (or rebuild the jar) and start again")));
  }

  @Override
  public void handle(RoutingContext ctx) {
    Operation op = contract.findOperation(ctx.normalizedPath(), ctx.request().method());
    if (op == null) { // not described: the router answers (a 404 naming the method and path)
      ctx.next();
      return;
    }
    boolean routeReadsBody = Boolean.TRUE.equals(op.getExtensions().get(ROUTE_READS_BODY));
    extract(ctx, op)
        .map(r -> (ValidatableRequest) new AsJson(r, routeReadsBody ? ROUTE_CHECKED : r.getBody()))
        .compose(r -> validator.validate(r, op.getOperationId()))
        .onSuccess(v -> {
          ctx.put(VALIDATED, v);
          ctx.put(OPERATION, op);
          ctx.next();
        })
        .onFailure(e -> ctx.fail(e instanceof ValidatorException v ? new ApiError(400, ContractErrors.message(v)) : e));
  }

  /** The request's parameters and body as the validator takes them; a value that cannot be URL-decoded is a 400. */
  private static Future<ValidatableRequest> extract(RoutingContext ctx, Operation op) {
    try {
      return RequestUtils.extract(ctx.request(), op, () -> Future.succeededFuture(ctx.body().buffer()));
    } catch (ValidatorException e) { // the extractor decodes parameters before it returns
      return Future.failedFuture(e);
    } catch (IllegalArgumentException e) { // Netty's query decoder: a bad %-escape
      return Future.failedFuture(new ApiError(400, "the query string is not valid URL encoding (" + e.getMessage() + "): percent-encode its values"));
    }
  }

  /**
   * A query parameter as validated, else the default its schema declares, else null. Whole numbers come as
   * a Long or Integer: use {@link Number}.
   */
  static Object query(RoutingContext ctx, String name) {
    ValidatedRequest v = ctx.get(VALIDATED);
    RequestParameter p = v == null ? null : v.getQuery().get(name);
    if (p != null && !p.isNull()) return p.get();
    Operation op = ctx.get(OPERATION);
    if (op == null) return null;
    return op.getParameters().stream().filter(d -> d.getName().equals(name) && d.getSchema() != null).findFirst()
        .map(d -> (Object) d.getSchema().get("default")).orElse(null);
  }

  /** The request as the validator reads it, its body as JSON (or the route's, see the class comment). */
  private record AsJson(ValidatableRequest from, RequestParameter body) implements ValidatableRequest {
    @Override
    public Map<String, RequestParameter> getCookies() {
      return from.getCookies();
    }

    @Override
    public Map<String, RequestParameter> getHeaders() {
      return from.getHeaders();
    }

    @Override
    public Map<String, RequestParameter> getPathParameters() {
      return from.getPathParameters();
    }

    @Override
    public Map<String, RequestParameter> getQuery() {
      return from.getQuery();
    }

    @Override
    public RequestParameter getBody() {
      return body;
    }

    @Override
    public String getContentType() {
      return "application/json";
    }
  }
}
