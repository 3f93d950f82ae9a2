// Listen options for the tests' msw servers: the service under test listens on 127.0.0.1 and
// the tests' own calls to it pass; any other request no handler answered fails the test.
import type { SharedOptions } from 'msw';

export const passLocalFailOthers: Partial<SharedOptions> = {
  onUnhandledRequest(request, print) {
    if (new URL(request.url).hostname !== '127.0.0.1') print.error();
  },
};
