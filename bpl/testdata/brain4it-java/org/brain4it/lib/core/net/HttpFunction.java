// A stand-in for brain4it's http function, which needs its server module:
// the harness builds the core library without it.
package org.brain4it.lib.core.net;

import org.brain4it.lang.BList;
import org.brain4it.lang.Context;
import org.brain4it.lang.Function;

public class HttpFunction implements Function {
  @Override
  public Object invoke(Context context, BList args) {
    throw new UnsupportedOperationException("http: not in this harness");
  }
}
