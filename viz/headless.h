// A virtual X server for rendering without a display: screenshots on a server and the GUI
// tests in CI. If $DISPLAY already names a server that answers, nothing is started.
#pragma once
#include <memory>
#include <string>

namespace descent::viz {

class XServer {
 public:
  // Makes sure an X server is reachable: the one $DISPLAY names, or a new Xvfb (then
  // $DISPLAY is set to it for this process). Null, with *error saying why, when neither
  // works (no Xvfb installed, it failed to start).
  static std::unique_ptr<XServer> ensure(std::string* error);
  ~XServer();  // stops the Xvfb this started (none when $DISPLAY was already usable)
  const std::string& display() const { return display_; }
  bool started_xvfb() const { return pid_ > 0; }

 private:
  XServer() = default;
  std::string display_;
  int pid_ = -1;
};

// Does the X server `display` (":0") accept a connection?
bool x_display_works(const std::string& display);

}  // namespace descent::viz
