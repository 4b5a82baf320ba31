// The REPL's commands for the tensor tier. For schedules: :kernel opens a schedule object of a
// kernel (or goes back to one), :schedules lists them, :sched steps the one under the
// microscope, and :tir, :c, :opencl and :view show it. The Session owns the objects
// (pipeline/schedules.cpp). Below them, the handlers of the table's other tensor rows
// (repl.cpp): :graph, :tune, :defaults, :tuned and :run.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <map>

#include "apps/repl.h"
#include "lang/text.h"

namespace descent {

using Words = std::vector<std::string>;

std::vector<Repl::Command> Repl::kernel_commands() {
  return {
      {":kernel", "NAME [n=SIZE ...] | ID",
       "open a schedule of a kernel (named dims default to 64), or go back to schedule ID",
       [](Repl& r, const Call& c) {
         const auto& w = c.words;
         Session& s = r.session_;
         if (w.size() < 2) {
           if (s.selected_kernel().empty())
             r.err_ << "error: usage: :kernel NAME [n=SIZE ...] | ID\n";
           else
             r.out_ << "kernel: " << s.selected_kernel() << " (schedule " << s.current_schedule()
                    << ")\n";
           return;
         }
         std::string error;
         // A number is a schedule's id (no kernel name starts with a digit).
         if (std::isdigit(static_cast<unsigned char>(w[1][0]))) {
           int id = std::atoi(w[1].c_str());
           if (w.size() > 2)
             error = "usage: :kernel ID (the dims are the schedule's own)";
           else if (id <= 0 || w[1].find_first_not_of("0123456789") != std::string::npos)
             error = "no schedule " + w[1] + " (:schedules lists them)";
           else if (s.use_schedule(id, &error))
             r.out_ << s.kernel_view("tir").text;
           if (!error.empty()) r.err_ << "error: " << error << '\n';
           return;
         }
         std::map<std::string, int64_t> dims;
         if (!Session::parse_dims({w.begin() + 2, w.end()}, &dims, &error) ||
             !s.select_kernel(w[1], dims, &error))
           r.err_ << "error: " << error << '\n';
         else
           r.out_ << s.kernel_view("tir").text;
       },
       [](const Session& s, const Words& w) {
         Words v;
         if (w.size() != 1) return v;
         for (const auto& k : s.module().kernels) v.push_back(k.name);
         for (const auto& o : s.open_schedules()) v.push_back(std::to_string(o.id));
         return v;
       }},
      {":grad", "KERNEL", "the kernel's adjoint kernels: each parameter's gradient, derived as index notation",
       [](Repl& r, const Call& c) {
         if (c.words.size() != 2) {
           r.err_ << "error: usage: :grad KERNEL (e.g. :grad linear)\n";
           return;
         }
         std::string text, error;
         if (r.session_.kernel_adjoints(c.words[1], &text, &error))
           r.out_ << text;
         else
           r.err_ << "error: " << error << '\n';
       },
       [](const Session& s, const Words& w) {
         Words v;
         if (w.size() == 1)
           for (const auto& k : s.module().kernels) v.push_back(k.name);
         return v;
       }},
      {":schedules", "", "the open schedules: kernel, dims, steps; which one calls use, which one :sched edits",
       [](Repl& r, const Call&) {
         auto open = r.session_.open_schedules();
         if (open.empty()) r.out_ << "no schedules open (:kernel NAME opens one)\n";
         for (const auto& o : open) {
           std::string dims;
           for (const auto& [d, n] : o.dims) dims += fmt::format(" {}={}", d, n);
           r.out_ << fmt::format("{} {:<3} {}{}: {} step{}{}\n", o.current ? "*" : " ", o.id, o.kernel,
                                 dims, o.steps, o.steps == 1 ? "" : "s",
                                 o.installed ? " (the kernel's calls use it)" : "");
         }
       }},
      {":tir", "[original]", "the selected kernel's loop nest (after the schedule)",
       [](Repl& r, const Call& c) {
         r.show_kernel(c.words.size() > 1 && c.words[1] == "original" ? "tir-original" : "tir");
       }},
      {":c", "", "the selected kernel's loop nest as C",
       [](Repl& r, const Call&) { r.show_kernel("c"); }},
      {":opencl", "", "the selected kernel's loop nest as OpenCL C",
       [](Repl& r, const Call&) { r.show_kernel("opencl"); }},
      {":traffic", "[CACHE]", "the bytes the selected kernel's nest moves through a cache (default 1M; e.g. :traffic 32K)",
       [](Repl& r, const Call& c) {
         if (c.words.size() > 1) {
           uint64_t bytes = 0;
           if (!parse_bytes(c.words[1], &bytes) || bytes == 0) {
             r.err_ << fmt::format("error: '{}' is not a size (e.g. 32K, 1M)\n", c.words[1]);
             return;
           }
           r.session_.set_traffic_cache(double(bytes));
         }
         r.show_kernel("traffic");
       }},
      {":view", "VIEW", "any view of the selected kernel, each device's generated code too (:view alone lists them)",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 2) {
           for (const auto& v : Session::kernel_views())
             r.out_ << fmt::format("  {:<14}{}\n", v.name, v.description);
           return;
         }
         r.show_kernel(c.words[1]);
       },
       [](const Session&, const Words& w) {
         Words v;
         if (w.size() == 1)
           for (const auto& k : Session::kernel_views()) v.push_back(k.name);
         return v;
       }},
      {":sched", "STEP ...", "apply a schedule step, e.g. :sched split i 32 (docs/tensor.md lists them)",
       [](Repl& r, const Call& c) {
         std::string step = c.line.substr(std::min(c.line.size(), c.line.find(":sched") + 6));
         std::string error;
         if (step.find_first_not_of(" \t") == std::string::npos) {
           r.err_ << "error: usage: :sched STEP (e.g. :sched split i 32), or :sched auto\n";
         } else if (split_words(step) == std::vector<std::string>{"auto"}) {
           // The schedule a run would give the kernel: its tuned record, else the defaults.
           std::string source;
           std::string device = r.session_.device() == "ref" ? "cpu" : r.session_.device();
           if (!r.session_.schedule_automatically(device, &source, &error))
             r.err_ << "error: " << error << '\n';
           else if (source.empty())
             r.out_ << "no automatic schedule for this kernel on " << device << '\n';
           else
             r.out_ << "# the " << source << " schedule for " << device << ":\n"
                    << r.session_.schedule_trace() << r.session_.kernel_view("tir").text;
         }
         else if (!r.session_.schedule_step(step, &error))
           r.err_ << "error: " << error << '\n';
         else
           r.out_ << r.session_.kernel_view("tir").text;
       },
       [](const Session& s, const Words& w) {
         return w.size() == 1 ? Session::schedule_primitives() : s.schedule_names();
       }},
  };
}

void Repl::show_kernel(const std::string& view) {
  StageResult r = session_.kernel_view(view);
  if (r.ok) out_ << r.text;
  else err_ << "error: " << r.text << '\n';
}

void Repl::graph_command(const Call& c) {
  Format f = Format::Text;
  std::string which = "executed";
  for (size_t i = 1; i < c.words.size(); ++i) {
    if (c.words[i] == "dot") f = Format::Dot;
    else which = c.words[i];
  }
  StageResult g = session_.graph_view(which, f);
  if (which == "executed" && !g.ok) g = session_.graph_view("pending", f);
  if (g.ok) out_ << g.text;
  else err_ << "error: " << g.text << '\n';
}

void Repl::tune_command(const Call& c) {
  Session::TuneRequest req;
  req.device = session_.device() == "ref" ? "cpu" : session_.device();
  std::vector<std::string> dim_words;
  bool all = false;
  for (size_t i = 1; i < c.words.size(); ++i) {
    const std::string& w = c.words[i];
    size_t eq = w.find('=');
    std::string key = w.substr(0, eq), value = eq == std::string::npos ? "" : w.substr(eq + 1);
    try {
      if (eq == std::string::npos && i == 1) {
        if (w == "all") all = true;
        else req.kernel = w;
      } else if (key == "strategy") req.strategy = value;
      else if (key == "trials") req.trials = std::stoi(value);
      else if (key == "seed") req.seed = std::stoull(value);
      else if (key == "device") req.device = value;
      else if (key == "db") req.database = value;
      else dim_words.push_back(w);
    } catch (const std::exception&) {
      err_ << "error: '" << w << "' needs a number\n";
      return;
    }
  }
  if (!all && req.kernel.empty() && !session_.selected_kernel().empty()) {
    req.kernel = session_.selected_kernel();
    req.dims = session_.selected_kernel_dims();
  }
  std::string error;
  if (!Session::parse_dims(dim_words, &req.dims, &error)) {
    err_ << "error: " << error << '\n';
    return;
  }
  Session::TuneReport rep = session_.tune(req, [this](const std::string& line) {
    out_ << line << '\n';
    out_.flush();
  });
  if (!rep.ok) {
    err_ << "error: " << rep.error << '\n';
    return;
  }
  out_ << tune_report(rep, req);
  out_ << "the kernels run tuned from now on on " << req.device
       << (req.kernel == session_.selected_kernel() && !req.kernel.empty()
               ? " (:sched auto puts the best schedule under the microscope)\n"
               : "\n");
}

void Repl::defaults_command(const Call& c) {
  if (c.words.size() > 1 && c.words[1] != "on" && c.words[1] != "off") {
    err_ << "error: usage: :defaults on|off\n";
    return;
  }
  if (c.words.size() > 1) session_.set_default_schedules(c.words[1] == "on");
  out_ << "default schedules: " << (session_.default_schedules() ? "on" : "off") << '\n';
}

void Repl::tuned_command(const Call& c) {
  std::string error;
  if (c.words.size() > 1 && c.words[1] == "off") {
    session_.set_tuning_database("");
  } else if (c.words.size() > 1 && !session_.read_tuning_database(c.words[1], &error)) {
    err_ << "error: " << error << '\n';
    return;
  }
  for (const auto& p : session_.tuning_problems()) err_ << "warning: " << p << '\n';
  out_ << "tuning database: "
       << (session_.tuning_database().empty() ? std::string("none") : session_.tuning_database())
       << " (" << session_.tuning_records() << " records)\n";
}

void Repl::run_command(const Call& c) {
  std::string device = c.words.size() > 1 ? c.words[1] : session_.device();
  Session::KernelRun k = session_.run_kernel(device, true);
  if (!k.ok) {
    err_ << "error: " << k.error << '\n';
    return;
  }
  std::string shape;
  for (auto d : k.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  out_ << fmt::format(
      "{} on {}: output [{}], sum {:.6g}, {:.3f} ms; matches the reference interpreter\n",
      session_.selected_kernel(), device, shape, k.checksum, k.seconds * 1e3);
}

}  // namespace descent
