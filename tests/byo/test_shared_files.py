"""The real files in ../shared/data, end to end through ``python -m app check`` (in-process), with a model fitted here."""
import pandas as pd
import pytest
import skops.io as sio
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from app.cli.check import main as check

ADULT = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
         "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income"]


def _run(capsys, *argv):
    code = check(list(map(str, argv)))
    out = capsys.readouterr()
    return code, out.out, out.err


def _tabular_pipe(num, cat):
    prep = ColumnTransformer([
        ("num", Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())]), num),
        ("cat", OneHotEncoder(handle_unknown="ignore"), cat)])
    return Pipeline([("prep", prep), ("rf", RandomForestClassifier(40, max_depth=8, random_state=0))])


def test_compas_duplicate_headers_empty_and_constant_columns(tmp_path, capsys, shared_data):
    path = shared_data / "compas" / "compas-scores-two-years.csv"
    df = pd.read_csv(path)
    num, cat = ["age", "priors_count", "priors_count.1", "violent_recid"], ["sex", "race", "type_of_assessment"]
    model = _tabular_pipe(num, cat).fit(df[num + cat], df.two_year_recid)
    sio.dump(model, tmp_path / "compas.skops")
    code, out, err = _run(capsys, "--model", tmp_path / "compas.skops", "--data", path, "--target", "two_year_recid")
    assert code == 0, err
    assert "7,214 rows x 7 features (4 numeric, 3 category)" in out
    assert "'decile_score' -> 'decile_score.1', 'priors_count' -> 'priors_count.1'" in out
    assert "column 'violent_recid' is empty in every row" in out
    assert "column 'type_of_assessment' is constant ('Risk of Recidivism')" in out
    assert "shap    row" in out and "additivity gap" in out and "model unchanged" in out


@pytest.fixture(scope="module")
def adult(tmp_path_factory, shared_data):
    """Headed copies of the real Adult files (bytes otherwise unchanged) and a pipeline fitted on 4,000 train rows."""
    d = tmp_path_factory.mktemp("adult")
    for name in ("adult.data", "adult.test"):
        raw = (shared_data / "adult" / name).read_text()
        (d / f"{name}.csv").write_text(", ".join(ADULT) + "\n" + raw)
    train = pd.read_csv(d / "adult.data.csv", skipinitialspace=True).sample(4000, random_state=0)
    num = ["age", "education-num", "capital-gain", "hours-per-week"]
    cat = ["workclass", "marital-status", "occupation", "sex", "native-country"]
    sio.dump(_tabular_pipe(num, cat).fit(train[num + cat], train.income), d / "adult.skops")
    return d


def test_adult_without_header_gets_a_clear_error(capsys, adult, shared_data):
    code, out, err = _run(capsys, "--model", adult / "adult.skops", "--data", shared_data / "adult" / "adult.data",
                          "--target", "income")
    assert code == 2 and out == ""
    assert err == ("candor: error: adult.data: the first row looks like data (39, State-gov, 77516, ...), "
                   "not column names; add a header row with the column names\n")


def test_adult_train_and_test_with_dotted_labels(capsys, adult):
    code, out, err = _run(capsys, "--model", adult / "adult.skops", "--data", adult / "adult.data.csv",
                          "--target", "income")
    assert code == 0, err
    assert "32,561 rows x 9 features (4 numeric, 5 category)" in out and "skipinitialspace" in out
    code, out, err = _run(capsys, "--model", adult / "adult.skops", "--data", adult / "adult.test.csv",
                          "--target", "income")
    assert code == 0, err
    assert "16,281 rows x 9 features" in out
    assert "16281 target labels normalised (spaces / trailing '.' removed): '<=50K.' -> '<=50K', '>50K.' -> '>50K'" in out


def test_imdb_sentences_with_nel_and_unbalanced_quotes(tmp_path, capsys, shared_data):
    from workspace.tables import read_table

    path = shared_data / "sentiment_sentences" / "imdb_labelled.txt"
    notes = []
    df = read_table(path, notes)
    assert len(df) == 1000 and df.sentiment.value_counts().to_dict() == {0: 500, 1: 500}
    assert any("\x85" in t for t in df.reviews)  # NEL kept inside its sentence, not a line break
    model = Pipeline([("tfidf", TfidfVectorizer()), ("lr", LogisticRegression(max_iter=1000))])
    model.fit(df.reviews.tolist(), df.sentiment)
    sio.dump(model, tmp_path / "imdb.skops")
    code, out, err = _run(capsys, "--model", tmp_path / "imdb.skops", "--data", path, "--target", "sentiment",
                          "--text-column", "reviews")
    assert code == 0, err
    assert "1,000 texts in 'reviews'" in out
    assert "unbalanced double quotes merged lines (748 rows instead of 1,000)" in out
    assert "lime    text row 0" in out and "model unchanged" in out


def test_imdb_with_a_hugging_face_folder_model(tmp_path, capsys, shared_data):
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from explainers.text import minilm_model_dir

    tok = AutoTokenizer.from_pretrained(minilm_model_dir(), local_files_only=True)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=24, num_labels=2,
                     id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1})
    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(tmp_path / "tiny")
    tok.save_pretrained(tmp_path / "tiny")
    path = shared_data / "sentiment_sentences" / "imdb_labelled.txt"
    long_row = next(i for i, t in enumerate(pd.read_csv(path, sep="\t", quoting=3).reviews) if len(t.split()) > 40)
    from app import services

    installed, had_model = services.state(), services.is_ready("text_model")
    code, out, err = _run(capsys, "--model", tmp_path / "tiny", "--data", path, "--target", "sentiment",
                          "--text-column", "reviews", "--row", long_row)
    assert code == 0, err
    # the check ran in services of its own: the installed ones are back, without the folder's model in them
    assert services.state() is installed and services.is_ready("text_model") == had_model
    assert "2 layers x 2 heads, labels negative, positive, max 24 tokens" in out
    assert f"attn    text row {long_row}: weights (2, 2, 24, 24)" in out and "; truncated from" in out
    assert "completeness gap" in out
    code, _, err = _run(capsys, "--model", tmp_path, "--data", path, "--target", "sentiment", "--text-column", "reviews")
    assert code == 2 and f"{tmp_path.name}: no config.json in the folder" in err and "text model" not in err
