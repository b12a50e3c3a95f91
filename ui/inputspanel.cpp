#include "inputspanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace oxport::studio {
namespace {

constexpr DType kDTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                             DType::UInt8,   DType::Int16,   DType::Int32,   DType::Int64,    DType::Bool};
constexpr FillKind kFills[] = {FillKind::Randn, FillKind::Rand,   FillKind::Smooth, FillKind::Zeros,
                               FillKind::Ones,  FillKind::Arange, FillKind::Npy};

QString q(const std::string& s) { return QString::fromStdString(s); }

bool valueMatches(const ArgRow& r) {
  const ArgValue& v = r.value;
  if (v.isNone()) return r.kind.optional || r.kind.kind == ArgKind::None;
  switch (r.kind.kind) {
    case ArgKind::Tensor: return v.isTensor();
    case ArgKind::TensorList: {
      auto* l = std::get_if<ArgValue::List>(&v.v);
      return l && std::all_of(l->begin(), l->end(), [](const ArgValue& x) { return x.isTensor(); });
    }
    case ArgKind::Int: return v.v.index() == 2;
    case ArgKind::Float: return v.v.index() == 2 || v.v.index() == 3;
    case ArgKind::Bool: return v.v.index() == 1;
    case ArgKind::String: return v.v.index() == 4;
    case ArgKind::NumberList: {
      auto* l = std::get_if<ArgValue::List>(&v.v);
      return l && std::all_of(l->begin(), l->end(), [](const ArgValue& x) { return x.v.index() == 2 || x.v.index() == 3; });
    }
    case ArgKind::None: return v.isNone();
    case ArgKind::Other: return true;
  }
  return true;
}

ArgumentInfo infoOf(const ArgRow& r) {
  ArgumentInfo a;
  a.name = r.name;
  a.type = r.type;
  a.has_default = r.has_default;
  a.default_value = r.default_value;
  a.keyword_only = r.keyword_only;
  return a;
}

void markInvalid(QWidget* w, bool bad, const QString& why = {}) {
  w->setStyleSheet(bad ? QStringLiteral("border: 1px solid #d03030;") : QString());
  w->setToolTip(bad ? why : w->property("normalToolTip").toString());
}

}  // namespace

InputsPanel::InputsPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("inputsScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  outer->addWidget(scroll);
  auto* content = new QWidget;
  auto* v = new QVBoxLayout(content);
  schema_ = new QLabel;
  schema_->setObjectName(QStringLiteral("schemaLabel"));
  schema_->setWordWrap(true);
  schema_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(schema_);
  body_ = new QWidget;
  rows_layout_ = new QVBoxLayout(body_);
  rows_layout_->setContentsMargins(0, 0, 0, 0);
  v->addWidget(body_);
  outputs_box_ = new QGroupBox(tr("Outputs"));
  outputs_box_->setToolTip(tr("output_names: names given to the graph's outputs, in order. Dynamic axes "
                              "of an output: the axes whose size is only known at run time."));
  outputs_grid_ = new QGridLayout(outputs_box_);
  v->addWidget(outputs_box_);
  extra_axes_ = new QLabel;
  extra_axes_->setObjectName(QStringLiteral("extraAxes"));
  extra_axes_->setWordWrap(true);
  extra_axes_->hide();
  v->addWidget(extra_axes_);
  v->addStretch(1);
  scroll->setWidget(content);
  setState(Preset{}, nullptr);
}

void InputsPanel::setState(const Preset& p, const ModelInfo* info, bool from_guesses) {
  state_ = p;
  from_guesses_ = from_guesses;
  if (info)
    info_ = *info;
  else
    info_.reset();
  rows_ = rowsFromOptions(info_ ? &*info_ : nullptr, state_.options);
  rebuild();
}

void InputsPanel::rebuildLater() {
  if (rebuild_pending_) return;
  rebuild_pending_ = true;
  QTimer::singleShot(0, this, [this] {
    rebuild_pending_ = false;
    rebuild();
  });
}

void InputsPanel::rebuild() {
  auto* scroll = findChild<QScrollArea*>(QStringLiteral("inputsScroll"));
  const int scroll_pos = scroll ? scroll->verticalScrollBar()->value() : 0;
  setUpdatesEnabled(false);
  // Replace the argument cards.
  // Never called from inside one of these widgets' own signals (edits rebuild through
  // rebuildLater()), so the old cards can go right away.
  while (QLayoutItem* it = rows_layout_->takeAt(0)) {
    delete it->widget();
    delete it;
  }
  if (info_) {
    schema_->setText(tr("<b>%1</b> · %2<br><code>%3</code>")
                         .arg(q(info_->path.filename().string()).toHtmlEscaped(),
                              QString::fromLatin1(modelKindName(info_->kind)), q(info_->schema).toHtmlEscaped()));
  } else {
    schema_->setText(tr("No model loaded. Arguments come from the model's forward() once one is open."));
  }
  if (rows_.empty()) {
    auto* none = new QLabel(info_ ? tr("forward() takes no arguments.") : tr("No arguments."));
    none->setEnabled(false);
    rows_layout_->addWidget(none);
  }
  for (int i = 0; i < static_cast<int>(rows_.size()); ++i) rows_layout_->addWidget(buildRow(i));
  buildOutputs();

  // dynamic_axes entries naming no input or output.
  std::vector<std::string> names;
  for (const auto& leaf : tensorLeaves(rows_)) names.push_back(inputName(leafIndex(leaf.row, leaf.element)));
  for (const auto& n : state_.options.output_names) names.push_back(n);
  QStringList extra;
  for (const auto& [k, spec] : state_.options.dynamic_axes)
    if (std::find(names.begin(), names.end(), k) == names.end()) extra << q(k) + QStringLiteral(" {") + q(formatAxes(spec)) + "}";
  extra_axes_->setVisible(!extra.isEmpty());
  extra_axes_->setText(tr("dynamic_axes also names %1, which is neither an input nor an output name.")
                           .arg(extra.join(QStringLiteral(", "))));
  setUpdatesEnabled(true);
  if (scroll) QTimer::singleShot(0, scroll, [scroll, scroll_pos] { scroll->verticalScrollBar()->setValue(scroll_pos); });
}

QWidget* InputsPanel::buildRow(int i) {
  const ArgRow& r = rows_[i];
  const QString key = QStringLiteral("arg.") + q(r.name);
  auto* box = new QGroupBox;
  box->setObjectName(key);
  QString title = q(r.name) + QStringLiteral("  —  ") + tr(argKindLabel(r.kind.kind));
  if (r.kind.optional) title += tr(", optional");
  box->setTitle(title);
  box->setToolTip(tr("%1: %2%3%4")
                      .arg(q(r.name), q(r.type),
                           r.has_default ? tr(" = %1").arg(q(r.default_value)) : QString(),
                           r.keyword_only ? tr(" (keyword-only)") : QString()));
  auto* form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::WrapLongRows);

  auto* passing = new QComboBox;
  passing->setObjectName(key + QStringLiteral(".passing"));
  passing->setToolTip(tr("args: positional arguments come first, in order; named (keyword) arguments go in "
                         "the trailing dictionary; an argument left out takes its default."));
  for (Passing p : {Passing::Positional, Passing::Keyword, Passing::Default})
    passing->addItem(tr(passingLabel(p)), static_cast<int>(p));
  auto disable = [passing](int index, const QString& why) {
    auto* model = qobject_cast<QStandardItemModel*>(passing->model());
    if (!model) return;
    if (auto* item = model->item(index)) {
      item->setEnabled(false);
      item->setToolTip(why);
    }
  };
  if (r.keyword_only) disable(0, tr("Keyword-only argument"));
  if (!r.has_default) disable(2, tr("No default value"));
  passing->setCurrentIndex(static_cast<int>(r.passing));
  connect(passing, &QComboBox::currentIndexChanged, this,
          [this, i, passing](int) { setPassing(i, static_cast<Passing>(passing->currentData().toInt())); });
  form->addRow(tr("Pass as"), passing);

  if (r.passing == Passing::Default) {
    auto* note = new QLabel(tr("Left out: forward() uses its default, %1.").arg(q(r.default_value)));
    note->setWordWrap(true);
    note->setEnabled(false);
    form->addRow(note);
    return box;
  }
  if (!valueMatches(r)) {
    auto* fix = new QPushButton(tr("Replace with a %1").arg(tr(argKindLabel(r.kind.kind))));
    fix->setObjectName(key + QStringLiteral(".fix"));
    form->addRow(new QLabel(tr("The form passes a value of another type here.")));
    form->addRow(fix);
    connect(fix, &QPushButton::clicked, this, [this, i] {
      std::vector<ArgRow> before = rows_;
      rows_[i].value = defaultValueFor(infoOf(rows_[i]), info_ ? &*info_ : nullptr);
      relinkNames(before);
      commit(QString(), tr("Replace value of %1").arg(q(rows_[i].name)), true);
    });
    return box;
  }
  if (r.kind.optional) {
    auto* none = new QCheckBox(tr("None"));
    none->setObjectName(key + QStringLiteral(".none"));
    none->setChecked(r.value.isNone());
    connect(none, &QCheckBox::toggled, this, [this, i](bool on) {
      std::vector<ArgRow> before = rows_;
      ArgumentInfo a = infoOf(rows_[i]);
      rows_[i].value = on ? ArgValue::none() : defaultValueFor(a, info_ ? &*info_ : nullptr);
      if (!on && rows_[i].value.isNone()) rows_[i].value = ArgValue::integer(0);
      relinkNames(before);
      commit(QString(), on ? tr("Pass None for %1").arg(q(rows_[i].name)) : tr("Pass a value for %1").arg(q(rows_[i].name)), true);
    });
    form->addRow(tr("Value"), none);
    if (r.value.isNone()) return box;
  }

  auto lineEditor = [&](const QString& text, const QString& tip) {
    auto* e = new QLineEdit(text);
    e->setObjectName(key + QStringLiteral(".value"));
    e->setProperty("normalToolTip", tip);
    e->setToolTip(tip);
    form->addRow(tr("Value"), e);
    return e;
  };
  switch (r.kind.kind) {
    case ArgKind::Tensor: form->addRow(buildTensorEditor(i, -1, key)); break;
    case ArgKind::TensorList: {
      auto& list = std::get<ArgValue::List>(rows_[i].value.v);
      auto* count = new QSpinBox;
      count->setObjectName(key + QStringLiteral(".count"));
      count->setRange(r.kind.fixed_count > 0 ? r.kind.fixed_count : 0, r.kind.fixed_count > 0 ? r.kind.fixed_count : 64);
      count->setValue(static_cast<int>(list.size()));
      count->setToolTip(tr("Number of tensors in the list; each becomes a graph input."));
      connect(count, &QSpinBox::valueChanged, this, [this, i](int n) {
        std::vector<ArgRow> before = rows_;
        auto& l = std::get<ArgValue::List>(rows_[i].value.v);
        TensorSpec proto;
        if (!l.empty()) proto = std::get<TensorSpec>(l.back().v);
        l.resize(static_cast<size_t>(n), ArgValue::tensor(proto));
        relinkNames(before);
        commit(QString(), tr("Resize list %1").arg(q(rows_[i].name)), true);
      });
      form->addRow(tr("Tensors"), count);
      for (int k = 0; k < static_cast<int>(list.size()); ++k) {
        auto* sub = new QGroupBox(QStringLiteral("%1[%2]").arg(q(r.name)).arg(k));
        auto* sl = new QVBoxLayout(sub);
        sl->setContentsMargins(6, 6, 6, 6);
        sl->addWidget(buildTensorEditor(i, k, QStringLiteral("%1[%2]").arg(key).arg(k)));
        form->addRow(sub);
      }
      break;
    }
    case ArgKind::Int: {
      auto* e = lineEditor(QString::number(std::get<int64_t>(r.value.v)), tr("An integer, baked into the graph."));
      e->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("-?\\d{0,18}")), e));
      connect(e, &QLineEdit::textEdited, this, [this, i, e](const QString& t) {
        bool ok = false;
        qlonglong v = t.toLongLong(&ok);
        markInvalid(e, !ok, tr("Not an integer"));
        if (!ok) return;
        rows_[i].value = ArgValue::integer(v);
        commit(QStringLiteral("value:%1").arg(i), tr("Edit %1").arg(q(rows_[i].name)));
      });
      break;
    }
    case ArgKind::Float: {
      double d = r.value.v.index() == 2 ? static_cast<double>(std::get<int64_t>(r.value.v)) : std::get<double>(r.value.v);
      auto* e = lineEditor(QString::number(d, 'g', 17), tr("A number, baked into the graph."));
      connect(e, &QLineEdit::textEdited, this, [this, i, e](const QString& t) {
        bool ok = false;
        double v = t.toDouble(&ok);
        markInvalid(e, !ok, tr("Not a number"));
        if (!ok) return;
        rows_[i].value = ArgValue::number(v);
        commit(QStringLiteral("value:%1").arg(i), tr("Edit %1").arg(q(rows_[i].name)));
      });
      break;
    }
    case ArgKind::Bool: {
      auto* c = new QCheckBox(tr("True"));
      c->setObjectName(key + QStringLiteral(".value"));
      c->setChecked(std::get<bool>(r.value.v));
      connect(c, &QCheckBox::toggled, this, [this, i](bool on) {
        rows_[i].value = ArgValue::boolean(on);
        commit(QString(), tr("Set %1 to %2").arg(q(rows_[i].name), on ? QStringLiteral("True") : QStringLiteral("False")));
      });
      form->addRow(tr("Value"), c);
      break;
    }
    case ArgKind::String: {
      auto* e = lineEditor(q(std::get<std::string>(r.value.v)), tr("A string, baked into the graph."));
      connect(e, &QLineEdit::textEdited, this, [this, i](const QString& t) {
        rows_[i].value = ArgValue::string(t.toStdString());
        commit(QStringLiteral("value:%1").arg(i), tr("Edit %1").arg(q(rows_[i].name)));
      });
      break;
    }
    case ArgKind::NumberList: {
      auto* e = lineEditor(q(formatNumberList(std::get<ArgValue::List>(r.value.v))),
                           tr("Numbers separated by commas: 1, 2, 3"));
      connect(e, &QLineEdit::textEdited, this, [this, i, e](const QString& t) {
        auto l = parseNumberList(t.toStdString());
        const int want = rows_[i].kind.fixed_count;
        bool ok = l && (want < 0 || static_cast<int>(l->size()) == want);
        markInvalid(e, !ok, want < 0 ? tr("Numbers separated by commas") : tr("Exactly %1 numbers").arg(want));
        if (!ok) return;
        rows_[i].value = ArgValue::list(*l);
        commit(QStringLiteral("value:%1").arg(i), tr("Edit %1").arg(q(rows_[i].name)));
      });
      break;
    }
    case ArgKind::None:
    case ArgKind::Other: {
      auto* note = new QLabel(tr("Type %1 cannot be edited here; it is passed as None.").arg(q(r.type)));
      note->setWordWrap(true);
      form->addRow(note);
      break;
    }
  }
  return box;
}

QWidget* InputsPanel::buildTensorEditor(int row, int element, const QString& key) {
  auto* w = new QWidget;
  auto* form = new QFormLayout(w);
  form->setContentsMargins(0, 0, 0, 0);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::WrapAllRows);  // labels above: the shape row needs the width
  const TensorSpec& t = *tensorAt(row, element);
  const int leaf = leafIndex(row, element);
  const std::string name = inputName(leaf);
  std::string suggested;
  for (const auto& l : tensorLeaves(rows_))
    if (l.row == row && l.element == element) suggested = l.suggested_name;

  auto* nameEdit = new QLineEdit(q(name));
  nameEdit->setObjectName(key + QStringLiteral(".inputName"));
  nameEdit->setPlaceholderText(tr("unnamed (the exporter picks one)"));
  nameEdit->setToolTip(tr("input_names: the name this tensor gets as a graph input. Needed to make its axes "
                          "dynamic. Suggested: %1").arg(q(suggested)));
  connect(nameEdit, &QLineEdit::textEdited, this, [this, leaf, key, name](const QString& text) {
    const bool had = !inputName(leaf).empty();
    setInputName(leaf, text.toStdString());
    commit(QStringLiteral("name:") + key, tr("Rename input to %1").arg(text));
    if (had != !text.isEmpty()) rebuildLater();  // the dynamic checkboxes need a name
  });
  form->addRow(tr("Input name"), nameEdit);

  // Shape: one column per dimension; size, "dynamic", and the axis label.
  auto* shapeBox = new QWidget;
  auto* grid = new QGridLayout(shapeBox);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setHorizontalSpacing(4);
  grid->setVerticalSpacing(2);
  const auto axes = axesOf(name);
  const bool npy = t.fill == FillKind::Npy;
  for (int d = 0; d < static_cast<int>(t.shape.size()); ++d) {
    auto* spin = new QSpinBox;
    spin->setObjectName(key + QStringLiteral(".dim%1").arg(d));
    spin->setRange(0, 1 << 30);
    spin->setValue(static_cast<int>(t.shape[d]));
    spin->setButtonSymbols(QAbstractSpinBox::NoButtons);  // narrow: type or use the wheel/arrow keys
    spin->setMaximumWidth(64);
    spin->setEnabled(!npy);
    spin->setToolTip(tr("Size of dimension %1 of the example tensor").arg(d));
    connect(spin, &QSpinBox::valueChanged, this, [this, row, element, d, key](int v) {
      tensorAt(row, element)->shape[d] = v;
      commit(QStringLiteral("dim:%1:%2").arg(key).arg(d), tr("Change %1 dimension %2").arg(key.mid(4)).arg(d));
    });
    auto* dyn = new QCheckBox(tr("dyn"));
    dyn->setObjectName(key + QStringLiteral(".dyn%1").arg(d));
    dyn->setChecked(axes.count(d) > 0);
    dyn->setEnabled(!name.empty());
    dyn->setToolTip(name.empty() ? tr("Give the input a name to make its axes dynamic")
                                 : tr("dynamic_axes: the size of this axis is only known at run time"));
    auto* label = new QLineEdit(axes.count(d) ? q(axes.at(d)) : QString());
    label->setObjectName(key + QStringLiteral(".axis%1").arg(d));
    label->setPlaceholderText(tr("name"));
    label->setEnabled(axes.count(d) > 0);
    label->setToolTip(tr("Name of the dynamic axis (e.g. batch). Left empty everywhere: the list form, and the "
                         "exporter names the axes."));
    label->setMinimumWidth(40);
    label->setMaximumWidth(64);
    connect(dyn, &QCheckBox::toggled, this, [this, leaf, d, label, key](bool on) {
      const std::string n = inputName(leaf);
      auto ax = axesOf(n);
      if (on) ax[d] = label->text().toStdString();
      else ax.erase(d);
      setAxes(n, ax);
      label->setEnabled(on);
      commit(QString(), on ? tr("Make %1 axis %2 dynamic").arg(key.mid(4)).arg(d) : tr("Make %1 axis %2 static").arg(key.mid(4)).arg(d));
    });
    connect(label, &QLineEdit::textEdited, this, [this, leaf, d, key](const QString& text) {
      const std::string n = inputName(leaf);
      auto ax = axesOf(n);
      ax[d] = text.toStdString();
      setAxes(n, ax);
      commit(QStringLiteral("axis:%1:%2").arg(key).arg(d), tr("Name axis %1 of %2").arg(d).arg(key.mid(4)));
    });
    grid->addWidget(spin, 0, d);
    grid->addWidget(dyn, 1, d);
    grid->addWidget(label, 2, d);
  }
  auto* add = new QToolButton;
  add->setObjectName(key + QStringLiteral(".addDim"));
  add->setText(QStringLiteral("+"));
  add->setToolTip(tr("Add a dimension"));
  add->setEnabled(!npy && t.shape.size() < 8);
  auto* remove = new QToolButton;
  remove->setObjectName(key + QStringLiteral(".removeDim"));
  remove->setText(QStringLiteral("−"));
  remove->setToolTip(tr("Remove the last dimension"));
  remove->setEnabled(!npy && !t.shape.empty());
  connect(add, &QToolButton::clicked, this, [this, row, element, key] {
    tensorAt(row, element)->shape.push_back(1);
    commit(QString(), tr("Add a dimension to %1").arg(key.mid(4)), true);
  });
  connect(remove, &QToolButton::clicked, this, [this, row, element, leaf, key] {
    auto& shape = tensorAt(row, element)->shape;
    if (shape.empty()) return;
    shape.pop_back();
    const std::string n = inputName(leaf);
    auto ax = axesOf(n);
    ax.erase(static_cast<int64_t>(shape.size()));
    setAxes(n, ax);
    commit(QString(), tr("Remove a dimension from %1").arg(key.mid(4)), true);
  });
  const int nd = static_cast<int>(t.shape.size());
  grid->addWidget(add, 0, nd);
  grid->addWidget(remove, 1, nd);
  if (t.shape.empty()) grid->addWidget(new QLabel(tr("scalar (0-d)")), 0, 0);
  form->addRow(tr("Shape"), shapeBox);
  // A shape the model's graph suggested (no preset gave one): say so, and what it rests on.
  if (info_ && from_guesses_ && element < 0) {
    auto it = info_->input_guesses.find(rows_[row].name);
    if (it != info_->input_guesses.end() && it->second.shape == t.shape && it->second.dtype == t.dtype) {
      auto* guess = new QLabel(tr("<i>Guessed from the model; check it.</i>"));
      guess->setObjectName(key + QStringLiteral(".guess"));
      const QString why = tr("The saved model does not record its input shapes. This one is guessed: %1.")
                              .arg(q(it->second.reason));
      guess->setToolTip(why);
      guess->setWordWrap(true);
      shapeBox->setToolTip(why);
      form->addRow(QString(), guess);
    }
  }

  auto* dtype = new QComboBox;
  dtype->setObjectName(key + QStringLiteral(".dtype"));
  for (DType d : kDTypes) dtype->addItem(QString::fromLatin1(dtypeName(d)), static_cast<int>(d));
  dtype->setCurrentIndex(dtype->findData(static_cast<int>(t.dtype)));
  dtype->setEnabled(!npy);
  dtype->setToolTip(tr("Element type of the example tensor"));
  connect(dtype, &QComboBox::currentIndexChanged, this, [this, row, element, dtype, key](int) {
    tensorAt(row, element)->dtype = static_cast<DType>(dtype->currentData().toInt());
    commit(QString(), tr("Set %1 dtype to %2").arg(key.mid(4), dtype->currentText()));
  });

  auto* fill = new QComboBox;
  fill->setObjectName(key + QStringLiteral(".fill"));
  for (FillKind f : kFills) fill->addItem(QString::fromLatin1(fillKindName(f)), static_cast<int>(f));
  fill->setCurrentIndex(fill->findData(static_cast<int>(t.fill)));
  fill->setToolTip(tr("How the example tensor is filled: randn (normal, seeded), rand (uniform, seeded), "
                      "smooth (a seeded low-frequency field in [0, 1], like a blurred photo), zeros, ones, "
                      "arange, or read from a .npy file"));
  connect(fill, &QComboBox::currentIndexChanged, this, [this, row, element, fill, key](int) {
    tensorAt(row, element)->fill = static_cast<FillKind>(fill->currentData().toInt());
    commit(QString(), tr("Fill %1 with %2").arg(key.mid(4), fill->currentText()), true);
  });

  auto* seed = new QSpinBox;
  seed->setObjectName(key + QStringLiteral(".seed"));
  seed->setRange(0, std::numeric_limits<int>::max());
  seed->setValue(static_cast<int>(std::min<uint64_t>(t.seed, std::numeric_limits<int>::max())));
  seed->setEnabled(t.fill == FillKind::Randn || t.fill == FillKind::Rand || t.fill == FillKind::Smooth);
  seed->setToolTip(tr("Seed of the random fill, so exports are repeatable"));
  connect(seed, &QSpinBox::valueChanged, this, [this, row, element, key](int v) {
    tensorAt(row, element)->seed = static_cast<uint64_t>(v);
    commit(QStringLiteral("seed:") + key, tr("Set %1 seed").arg(key.mid(4)));
  });
  auto* typeRow = new QWidget;
  auto* tl = new QHBoxLayout(typeRow);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(dtype);
  tl->addWidget(fill);
  tl->addWidget(new QLabel(tr("seed")));
  tl->addWidget(seed);
  form->addRow(tr("dtype / fill"), typeRow);

  if (npy) {
    auto* npyRow = new QWidget;
    auto* nl = new QHBoxLayout(npyRow);
    nl->setContentsMargins(0, 0, 0, 0);
    auto* path = new QLineEdit(q(t.npy));
    path->setObjectName(key + QStringLiteral(".npy"));
    path->setPlaceholderText(tr("path/to/tensor.npy"));
    path->setToolTip(tr("A NumPy .npy file; its shape and dtype are used"));
    auto* browse = new QToolButton;
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Choose a .npy file"));
    nl->addWidget(path, 1);
    nl->addWidget(browse);
    connect(path, &QLineEdit::textEdited, this, [this, row, element, key](const QString& p) {
      tensorAt(row, element)->npy = p.toStdString();
      commit(QStringLiteral("npy:") + key, tr("Set %1 .npy file").arg(key.mid(4)));
    });
    connect(browse, &QToolButton::clicked, this, [this, row, element, key, path] {
      QString f = QFileDialog::getOpenFileName(this, tr("Example tensor"), path->text(), tr("NumPy arrays (*.npy)"));
      if (f.isEmpty()) return;
      path->setText(f);
      tensorAt(row, element)->npy = f.toStdString();
      commit(QString(), tr("Set %1 .npy file").arg(key.mid(4)));
    });
    form->addRow(tr(".npy file"), npyRow);
  }
  return w;
}

void InputsPanel::buildOutputs() {
  while (QLayoutItem* it = outputs_grid_->takeAt(0)) {
    delete it->widget();
    delete it;
  }
  const auto& names = state_.options.output_names;
  int count = static_cast<int>(names.size());
  if (info_) count = std::max(count, outputCountOf(info_->return_type));
  outputs_grid_->addWidget(new QLabel(tr("Name")), 0, 0);
  outputs_grid_->addWidget(new QLabel(tr("Dynamic axes (0:batch, 1)")), 0, 1);
  for (int i = 0; i < count; ++i) {
    const std::string name = i < static_cast<int>(names.size()) ? names[i] : std::string();
    auto* n = new QLineEdit(q(name));
    n->setObjectName(QStringLiteral("out.%1.name").arg(i));
    n->setPlaceholderText(tr("unnamed"));
    n->setToolTip(tr("output_names[%1]").arg(i));
    auto* a = new QLineEdit;
    a->setObjectName(QStringLiteral("out.%1.axes").arg(i));
    a->setProperty("normalToolTip", tr("Axes of this output whose size is only known at run time: "
                                       "indices, optionally with a name (0:batch, 2:seq)."));
    a->setToolTip(a->property("normalToolTip").toString());
    auto it = state_.options.dynamic_axes.find(name);
    if (!name.empty() && it != state_.options.dynamic_axes.end()) a->setText(q(formatAxes(it->second)));
    a->setEnabled(!name.empty());
    connect(n, &QLineEdit::textEdited, this, [this, i, a](const QString& text) {
      setOutputName(i, text.toStdString());
      a->setEnabled(!text.isEmpty());
      commit(QStringLiteral("outname:%1").arg(i), tr("Rename output %1").arg(i));
    });
    connect(a, &QLineEdit::textEdited, this, [this, i, a](const QString& text) {
      const auto& on = state_.options.output_names;
      const std::string name = i < static_cast<int>(on.size()) ? on[i] : std::string();
      std::string error;
      auto spec = parseAxes(name, text.toStdString(), &error);
      markInvalid(a, !spec, q(error));
      if (!spec || name.empty()) return;
      if (spec->axes.empty())
        state_.options.dynamic_axes.erase(name);
      else
        state_.options.dynamic_axes[name] = *spec;
      commit(QStringLiteral("outaxes:%1").arg(i), tr("Dynamic axes of output %1").arg(q(name)));
    });
    outputs_grid_->addWidget(n, i + 1, 0);
    outputs_grid_->addWidget(a, i + 1, 1);
  }
  auto* buttons = new QWidget;
  auto* bl = new QHBoxLayout(buttons);
  bl->setContentsMargins(0, 0, 0, 0);
  auto* add = new QPushButton(tr("Add output name"));
  add->setObjectName(QStringLiteral("out.add"));
  auto* remove = new QPushButton(tr("Remove last"));
  remove->setObjectName(QStringLiteral("out.remove"));
  remove->setEnabled(!names.empty());
  bl->addWidget(add);
  bl->addWidget(remove);
  bl->addStretch(1);
  connect(add, &QPushButton::clicked, this, [this, count] {
    auto& on = state_.options.output_names;
    on.resize(std::max<size_t>(on.size(), static_cast<size_t>(count)));
    on.push_back(count == 0 ? "output" : "output_" + std::to_string(on.size()));
    commit(QString(), tr("Add an output name"), true);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    auto& on = state_.options.output_names;
    if (on.empty()) return;
    state_.options.dynamic_axes.erase(on.back());
    on.pop_back();
    commit(QString(), tr("Remove an output name"), true);
  });
  outputs_grid_->addWidget(buttons, count + 1, 0, 1, 2);
}

void InputsPanel::commit(const QString& field, const QString& what, bool structural) {
  rowsToOptions(rows_, state_.options);
  emit edited(state_, field, what);
  if (structural) rebuildLater();
}

TensorSpec* InputsPanel::tensorAt(int row, int element) {
  ArgValue& v = rows_[row].value;
  if (element < 0) return &std::get<TensorSpec>(v.v);
  return &std::get<TensorSpec>(std::get<ArgValue::List>(v.v)[element].v);
}

int InputsPanel::leafIndex(int row, int element) const {
  auto leaves = tensorLeaves(rows_);
  for (size_t k = 0; k < leaves.size(); ++k)
    if (leaves[k].row == row && leaves[k].element == element) return static_cast<int>(k);
  return -1;
}

std::string InputsPanel::inputName(int leaf) const {
  const auto& n = state_.options.input_names;
  return leaf >= 0 && leaf < static_cast<int>(n.size()) ? n[leaf] : std::string();
}

void InputsPanel::renameDynamicKey(const std::string& from, const std::string& to) {
  auto& da = state_.options.dynamic_axes;
  auto it = da.find(from);
  if (from.empty() || it == da.end() || from == to) return;
  DynamicAxisSpec spec = it->second;
  da.erase(it);
  if (!to.empty()) da[to] = spec;
}

void InputsPanel::setInputName(int leaf, const std::string& name) {
  if (leaf < 0) return;
  auto& n = state_.options.input_names;
  const std::string old = inputName(leaf);
  if (static_cast<int>(n.size()) <= leaf) n.resize(leaf + 1);
  n[leaf] = name;
  while (!n.empty() && n.back().empty()) n.pop_back();
  renameDynamicKey(old, name);
}

void InputsPanel::setOutputName(int index, const std::string& name) {
  auto& n = state_.options.output_names;
  const std::string old = index < static_cast<int>(n.size()) ? n[index] : std::string();
  if (static_cast<int>(n.size()) <= index) n.resize(index + 1);
  n[index] = name;
  while (!n.empty() && n.back().empty()) n.pop_back();
  renameDynamicKey(old, name);
}

std::map<int64_t, std::string> InputsPanel::axesOf(const std::string& name) const {
  std::map<int64_t, std::string> out;
  if (name.empty()) return out;
  auto it = state_.options.dynamic_axes.find(name);
  if (it == state_.options.dynamic_axes.end()) return out;
  for (const auto& [axis, label] : it->second.axes) out[axis] = it->second.list_form ? std::string() : label;
  return out;
}

void InputsPanel::setAxes(const std::string& name, const std::map<int64_t, std::string>& axes) {
  if (name.empty()) return;
  if (axes.empty())
    state_.options.dynamic_axes.erase(name);
  else
    state_.options.dynamic_axes[name] = dynamicSpecFrom(name, axes);
}

void InputsPanel::setPassing(int row, Passing p) {
  if (rows_[row].passing == p) return;
  std::vector<ArgRow> before = rows_;
  rows_[row].passing = p;
  // Positional arguments must come first.
  for (int j = 0; j < static_cast<int>(rows_.size()); ++j) {
    if (p == Passing::Positional && j < row && rows_[j].passing != Passing::Positional) rows_[j].passing = Passing::Positional;
    if (p != Passing::Positional && j > row && rows_[j].passing == Passing::Positional) rows_[j].passing = Passing::Keyword;
  }
  relinkNames(before);
  commit(QString(), tr("Pass %1 as %2").arg(q(rows_[row].name), tr(passingLabel(p))), true);
}

void InputsPanel::relinkNames(const std::vector<ArgRow>& before) {
  auto& names = state_.options.input_names;
  if (names.empty()) return;  // the user leaves naming to the exporter
  std::map<std::pair<std::string, int>, std::string> by_key;
  auto old_leaves = tensorLeaves(before);
  for (size_t k = 0; k < old_leaves.size() && k < names.size(); ++k)
    by_key[{before[old_leaves[k].row].name, old_leaves[k].element}] = names[k];
  std::vector<std::string> fresh;
  for (const auto& leaf : tensorLeaves(rows_)) {
    auto it = by_key.find({rows_[leaf.row].name, leaf.element});
    fresh.push_back(it != by_key.end() ? it->second : leaf.suggested_name);
  }
  while (!fresh.empty() && fresh.back().empty()) fresh.pop_back();
  names = std::move(fresh);
}

}  // namespace oxport::studio
