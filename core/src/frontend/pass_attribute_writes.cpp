// Writes to module attributes as values (see pass_attribute_writes.h).
#include "frontend/pass_attribute_writes.h"

#include <map>
#include <optional>
#include <set>
#include <string>

#include "frontend/jit_util.h"

namespace oxport {

namespace jit = torch::jit;

namespace {

using c10::prim::GetAttr;
using c10::prim::SetAttr;

// What the current call has written so far: attribute path -> its value.
using Env = std::map<std::string, jit::Value*>;

class AttributeWrites {
 public:
  explicit AttributeWrites(jit::Graph& g) : g_(g), self_(g.inputs().at(0)) {}

  // Can every write be followed? Records each written attribute's type, and names the objects
  // forward creates (a TorchScript class: `b = Box(t)` is a prim::CreateObject, its __init__ and
  // methods inlined into SetAttr/GetAttr on it) so that their attributes become values too.
  bool check(jit::Block* b) {
    for (jit::Node* n : b->nodes()) {
      if (n->kind() == c10::prim::CreateObject && onlyAttributeUses(n->output()))
        created_[n->output()] = "@" + std::to_string(created_.size());
      for (jit::Block* sb : n->blocks())
        if (!check(sb)) return false;
      if (n->kind() != SetAttr) continue;
      auto key = keyOf(n);
      if (!key || n->input(1)->type()->kind() == c10::TypeKind::ClassType) return false;
      for (jit::Block* ob = b; ob->owningNode(); ob = ob->owningNode()->owningBlock()) {
        const jit::Symbol k = ob->owningNode()->kind();
        if (k != c10::prim::If && k != c10::prim::Loop) return false;
      }
      types_[*key] = n->input(0)->type()->expectRef<c10::ClassType>().getAttribute(n->s(c10::attr::name));
    }
    return true;
  }

  void rewrite(jit::Block* b, Env& env) {
    for (auto it = b->nodes().begin(); it != b->nodes().end();) {
      jit::Node* n = *it;
      ++it;
      if (n->kind() == c10::prim::If) {
        rewriteIf(n, env);
      } else if (n->kind() == c10::prim::Loop) {
        rewriteLoop(n, env);
      } else if (n->kind() == SetAttr) {
        const std::string key = *keyOf(n);
        env[key] = n->input(1);
        Diagnostic w = makeWarning(
            "attribute-write-dropped",
            "forward() writes self." + key + ", and this call also reads its saved value: a later call of the "
                "model would read the new value, but an ONNX graph keeps no state between runs, so the file "
                "computes the first call from the model's saved state",
            "keep state out of forward (pass it as an input and return the new value), or accept that the "
            "exported graph is the first call's");
        // TorchScript gives SetAttr no source range: the line is that of the value written.
        jit::Node* where = locationOf(n).line > 0 || n->input(1)->node()->kind() == c10::prim::Param ? n : n->input(1)->node();
        w = atNode(w, where);
        w.node_kind = "prim::SetAttr";
        last_write_[key] = w;
        n->destroy();
      } else if (n->kind() == GetAttr) {
        auto key = keyOf(n);
        if (!key || !types_.count(*key)) continue;
        auto found = env.find(*key);
        if (found == env.end()) {
          if (!isCreatedKey(*key)) reads_saved_.insert(*key);  // the module's value, as the first call
          continue;
        }
        n->output()->replaceAllUsesWith(found->second);
        n->destroy();
      } else {
        for (jit::Block* sb : n->blocks()) rewrite(sb, env);  // no writes inside (check)
      }
    }
  }

  std::vector<Diagnostic> warnings(const Env& final_env) const {
    std::vector<Diagnostic> out;
    for (const auto& [key, v] : final_env)
      if (reads_saved_.count(key) && last_write_.count(key)) out.push_back(last_write_.at(key));
    return out;
  }

  // The objects forward created, now that nothing reads or writes their attributes.
  void removeCreatedObjects() {
    for (const auto& [v, name] : created_) {
      jit::Node* create = v->node();
      if (!v->hasUses()) create->destroy();
    }
  }

 private:
  // Whether an object's only uses are attribute reads and writes on it (after inlining, the
  // methods of a TorchScript class are just that); one passed on to anything else is left alone.
  static bool onlyAttributeUses(jit::Value* obj) {
    for (const jit::Use& u : obj->uses())
      if (!((u.user->kind() == GetAttr || u.user->kind() == SetAttr) && u.offset == 0)) return false;
    return true;
  }

  // The attribute path of object `v`: "" for self, "a.b" for self.a.b, "@2" for the third object
  // forward created and "@2.a" below it; none for any other object.
  std::optional<std::string> objectPath(jit::Value* v) const {
    if (v == self_) return std::string();
    if (auto c = created_.find(v); c != created_.end()) return c->second;
    jit::Node* n = v->node();
    if (n->kind() != GetAttr) return std::nullopt;
    auto p = objectPath(n->input());
    if (!p) return std::nullopt;
    return p->empty() ? n->s(c10::attr::name) : *p + "." + n->s(c10::attr::name);
  }

  // "path.name" of the attribute GetAttr/SetAttr node `n` reads or writes, if its object is self,
  // an object forward created, or on a path from one of those.
  std::optional<std::string> keyOf(jit::Node* n) const {
    auto p = objectPath(n->input(0));
    if (!p) return std::nullopt;
    return p->empty() ? n->s(c10::attr::name) : *p + "." + n->s(c10::attr::name);
  }

  // The object a key starts from: self, or the created object named by its first part.
  jit::Value* rootOf(const std::string& key) const {
    if (key.empty() || key[0] != '@') return self_;
    const std::string name = key.substr(0, key.find('.'));
    for (const auto& [v, n] : created_)
      if (n == name) return v;
    return self_;
  }

  static bool isCreatedKey(const std::string& key) { return !key.empty() && key[0] == '@'; }

  // Whether the key's object exists where node `at` stands (an object created inside a branch or
  // a loop body lives only there: its attributes are not carried out of it).
  bool visibleAt(const std::string& key, jit::Node* at) const {
    jit::Value* root = rootOf(key);
    if (root == self_) return true;
    for (jit::Block* b = at->owningBlock(); b; b = b->owningNode() ? b->owningNode()->owningBlock() : nullptr)
      if (b == root->node()->owningBlock()) return true;
    return false;
  }

  // The attribute's value in `env`, or its saved value read from the module before `at`.
  jit::Value* current(const std::string& key, const Env& env, jit::Node* at) {
    auto found = env.find(key);
    if (found != env.end()) return found->second;
    if (!isCreatedKey(key)) reads_saved_.insert(key);
    jit::WithInsertPoint guard(at);
    jit::Value* v = rootOf(key);
    size_t start = isCreatedKey(key) ? key.find('.') + 1 : 0;
    for (size_t dot = key.find('.', start); ; dot = key.find('.', start)) {
      v = g_.insertGetAttr(v, key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return v;
  }

  // Keys written anywhere inside `b` whose object exists at `at` (the If or Loop holding `b`).
  void writtenIn(jit::Block* b, jit::Node* at, std::set<std::string>& out) const {
    for (jit::Node* n : b->nodes()) {
      for (jit::Block* sb : n->blocks()) writtenIn(sb, at, out);
      if (n->kind() != SetAttr) continue;
      std::string key = *keyOf(n);
      if (visibleAt(key, at)) out.insert(std::move(key));
    }
  }

  void rewriteIf(jit::Node* n, Env& env) {
    std::set<std::string> written;
    for (jit::Block* sb : n->blocks()) writtenIn(sb, n, written);
    std::vector<Env> branch_env;
    for (jit::Block* sb : n->blocks()) {
      branch_env.push_back(env);
      rewrite(sb, branch_env.back());
    }
    for (const std::string& key : written) {
      jit::Value* before = current(key, env, n);
      c10::TypePtr type;
      for (size_t i = 0; i < n->blocks().size(); ++i) {
        auto found = branch_env[i].find(key);
        jit::Value* v = found != branch_env[i].end() ? found->second : before;
        n->blocks()[i]->registerOutput(v);
        auto u = type ? c10::unifyTypes(type, v->type()) : c10::optional<c10::TypePtr>(v->type());
        type = u ? *u : types_.at(key);
      }
      env[key] = n->addOutput()->setType(type);
    }
  }

  void rewriteLoop(jit::Node* n, Env& env) {
    jit::Block* body = n->blocks().at(0);
    std::set<std::string> written;
    writtenIn(body, n, written);
    Env body_env = env;
    std::vector<std::string> carried(written.begin(), written.end());
    for (const std::string& key : carried) {
      n->addInput(current(key, env, n));
      body_env[key] = body->addInput()->setType(types_.at(key));
    }
    rewrite(body, body_env);
    for (const std::string& key : carried) {
      body->registerOutput(body_env.at(key));
      env[key] = n->addOutput()->setType(types_.at(key));
    }
  }

  jit::Graph& g_;
  jit::Value* self_;
  std::map<std::string, c10::TypePtr> types_;     // each written attribute's declared type
  std::set<std::string> reads_saved_;             // attributes this call reads before writing
  std::map<std::string, Diagnostic> last_write_;  // the warning about each attribute's last write
  std::map<jit::Value*, std::string> created_;    // objects forward creates -> "@k"
};

}  // namespace

std::vector<Diagnostic> functionalizeAttributeWrites(jit::Graph& g) {
  if (g.inputs().empty()) return {};
  AttributeWrites w(g);
  if (!w.check(g.block())) return {};
  Env env;
  w.rewrite(g.block(), env);
  w.removeCreatedObjects();
  return w.warnings(env);
}

}  // namespace oxport
