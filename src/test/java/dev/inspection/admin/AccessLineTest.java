package dev.inspection.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class AccessLineTest {
  @Test
  void pathWithoutQueryIsThePath() {
    assertEquals("/health/ready", AccessLine.target("/health/ready", null));
    assertEquals("/health/ready", AccessLine.target("/health/ready", ""));
  }

  @Test
  void credentialValuesInTheQueryAreMaskedOthersKept() {
    assertEquals("/api/v1/devices?limit=5&access_token=***&state=DOWN",
        AccessLine.target("/api/v1/devices", "limit=5&access_token=abc123&state=DOWN"));
    assertEquals("/x?Password=***&apiKey=***&sig=***&session_id=***&q", AccessLine.target("/x", "Password=p&apiKey=k&sig=s&session_id=1&q"));
  }

  @Test
  void anEncodedNameIsJudgedDecoded() {
    assertEquals("/x?%74oken=***", AccessLine.target("/x", "%74oken=abc"));
    assertEquals("/x?%zz=1", AccessLine.target("/x", "%zz=1"));
  }
}
