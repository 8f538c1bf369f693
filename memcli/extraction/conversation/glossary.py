"""English keywords for a Chinese, Japanese or Korean statement, so an English question finds it.

The offline extractor keeps a CJK statement verbatim (cjk.py); the default local embedding
model and an English question ("When is the user's mother's birthday?") do not meet it
there. So the statement gets a short English gloss of the everyday words it contains
(family, dates, home, travel, food, work, health, likes) and of its dates, converted by
rule ("4월 18일", "5月9日" -> April 18, May 9). A word the glossary does not know is
simply not glossed: the statement itself is never changed. The glossary is small and
general on purpose (the words of daily life, the commonest countries and cities), not a
dictionary; forms are matched as substrings, longest first, so 誕生日 wins over 日.
"""

from __future__ import annotations

import re

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DATE = re.compile(r"(\d{1,2})\s*[월月]\s*(?:(\d{1,2})\s*[일日号號])?")
_YEAR = re.compile(r"(\d{4})\s*[년年]")

# "english: form form form" (Korean, Japanese, Chinese forms, simplified and traditional)
_ENTRIES = """
mother: 엄마 어머니 어머님 母 お母さん 母親 妈妈 媽媽 母亲 母親 我妈 我媽 老妈 老媽
father: 아빠 아버지 아버님 父 お父さん 父親 爸爸 父亲 我爸 老爸
parents: 부모 両親 父母
sister: 누나 언니 여동생 姉 妹 お姉さん 姐姐 妹妹
brother: 오빠 남동생 兄 弟 お兄さん 哥哥 弟弟
grandmother: 할머니 祖母 おばあさん 奶奶 外婆 姥姥
grandfather: 할아버지 祖父 おじいさん 爷爷 外公
son: 아들 息子 儿子 兒子
daughter: 딸 女儿 女兒
child baby: 아기 아이 애기 조카 赤ちゃん 子供 孩子 宝宝 寶寶 婴儿
uncle: 삼촌 이모부 고모부 叔父 伯父 おじさん 叔叔 舅舅
aunt: 이모 고모 叔母 伯母 おばさん 阿姨 姑姑
wife: 아내 와이프 妻 奥さん 妻子 老婆
fine okay: 大丈夫 괜찮아
husband: 남편 旦那 丈夫 老公
partner: 여자친구 남자친구 애인 彼女 彼氏 恋人 女朋友 男朋友 对象
family: 가족 家族 家人
friend: 친구 友達 友人 朋友
colleague: 동료 同僚 同事
boss manager: 상사 팀장 부장 上司 部長 老板 经理 經理 领导
birthday: 생일 생신 誕生日 生日
birth pregnancy due: 출산 임신 예정일 出産 妊娠 予定日 出生 怀孕 懷孕 预产期
wedding marriage: 결혼 結婚 结婚 婚礼 婚禮
gift present: 선물 プレゼント 贈り物 礼物 禮物 送给 送給
card: 카드 カード 卡片
birthday party: 파티 パーティー 派对
live lives home: 살아 사셔 살고 사는 住んで 住む 住在
house home: 집 自宅 房子
flat apartment: 아파트 マンション アパート 公寓
move moving: 이사 引っ越し 引越し 搬家
address: 주소 住所 地址
registration: 등록 登録 登记 登記
visit: 방문 오신 온대 오신대 놀러 訪問 来る 来ます 访问 訪問 来看
trip travel: 여행 旅行 旅游 旅遊
flight: 비행기 항공 フライト 飛行機 航班 飞机 飛機
airport: 공항 空港 机场 機場
train: 기차 電車 列車 火车 火車
hotel: 호텔 ホテル 酒店 宾馆
ryokan inn: 旅館 료칸 温泉旅馆
hot spring: 온천 温泉
room: 部屋 房间 房間
name: 이름 名前 名字
go going: 갈까 行きます 行く
come back return: 돌아 帰る 回来
stay: 泊まり 泊まる 泊
today: 오늘 今日 今天
tomorrow: 내일 明日 明天
yesterday: 어제 昨日 昨天
week: 週 星期 礼拜
weekend: 주말 週末 周末
year: 年
morning: 아침 朝 早上 上午
evening night: 저녁 夜 晩 晚上
Monday: 월요일 月曜日 星期一 周一
Tuesday: 화요일 火曜日 星期二 周二
Wednesday: 수요일 水曜日 星期三 周三
Thursday: 목요일 木曜日 星期四 周四
Friday: 금요일 金曜日 星期五 周五
Saturday: 토요일 土曜日 星期六 周六
Sunday: 일요일 日曜日 星期日 星期天 周日
work job: 직장 회사 仕事 会社 職場 工作 公司 上班
meeting: 회의 会議 会议 會議
shift: 교대 근무 シフト 夜勤
doctor hospital: 병원 의사 病院 医者 医院 醫院 医生 醫生
vet: 수의사 동물병원 獣医 兽医 獸醫
sick ill: 아파 病気 生病
allergy: 알레르기 アレルギー 过敏 過敏
dog: 강아지 犬 狗 狗狗
dog food: 사료 ドッグフード 狗粮 狗糧
cat: 고양이 猫
food: 음식 食べ物 食物 饭 飯
eat: 먹 食べ 吃
drink: 마시 飲み 喝
coffee: 커피 コーヒー 咖啡
tea: お茶 茶
green tea: 녹차 緑茶 绿茶 綠茶 抹茶
oolong: 우롱차 ウーロン茶 乌龙茶 烏龍茶 우롱 ウーロン 乌龙 烏龍
water:
beer: 맥주 ビール 啤酒
wine: 와인 ワイン 葡萄酒
rice: 밥 쌀 ご飯 米饭 米飯
noodles: 라면 국수 ラーメン 麺 面条 麵
dumplings: 만두 餃子 饺子
meat: 고기 肉
chicken: 닭 치킨 鶏肉 チキン 鸡肉 雞肉
beef: 소고기 牛肉
pork: 돼지고기 豚肉 猪肉
lamb: 양고기 ラム 羊肉
fish: 생선 魚 鱼 魚
vegetarian: 채식 ベジタリアン 素食
cook: 요리 料理 做饭 做菜
like likes prefer: 좋아 좋다 好き 好む 喜欢 喜歡 爱 愛
dislike hate: 싫어 嫌い 讨厌 討厭
want: 싶어 싶다 たい 欲しい 想要
favourite: 제일 좋아 一番好き 最喜欢 最爱
dark mode: 다크 모드 ダークモード 深色模式 暗色
theme: 테마 テーマ 主题 主題
editor: 에디터 エディター 编辑器 編輯器
computer laptop: 컴퓨터 노트북 パソコン 电脑 電腦 笔记本
phone: 휴대폰 핸드폰 電話 スマホ 手机 手機
language: 언어 言語 语言 語言
Korean: 한국어 韓国語 韩语 韓語
Japanese: 일본어 日本語 日语 日語
Chinese: 중국어 中国語 中文 汉语 漢語
English: 영어 英語 英语
practice learn: 연습 공부 배우 練習 勉強 学习 學習 练习
class lesson: 수업 레슨 クラス レッスン 授業 课程 課程 上课 上課
teacher: 선생님 교사 教師 教师 老师 老師
school: 학교 学校 學校
exam test: 시험 試験 テスト 考试 考試
training internship: 연수 인턴 研修 インターン 实习 實習
online: 온라인 オンライン 线上 線上 网上 網上
delivery: 배달 배송 配達 配送 送货 送貨
restaurant: 식당 레스토랑 レストラン 餐厅 餐廳 饭店 飯店
shop store: 가게 商店 お店
hiking: 등산 山登り 登山 爬山
running: 달리기 러닝 ランニング 跑步
swimming: 수영 水泳 游泳
jacket: 바람막이 재킷 자켓 ジャケット 夹克 外套
clothes: 옷 服 衣服
shoes: 신발 운동화 靴 鞋
money: 돈 お金 钱 錢
buy: 사려고 샀 사다 買う 買い 买 買
price: 가격 値段 价格 價格
uncle (becoming): 삼촌 된다
Korea: 한국 韓国 韩国 韓國
Seoul: 서울 ソウル 首尔 首爾
Busan: 부산 釜山
Japan: 일본 日本
Tokyo: 도쿄 東京 东京
Osaka: 오사카 大阪
Kyoto: 교토 京都
China: 중국 中国 中國
Beijing: 베이징 北京
Shanghai: 상하이 上海
Taiwan: 대만 台湾 台灣
Hong Kong: 홍콩 香港
Netherlands: 네덜란드 オランダ 荷兰 荷蘭
Germany: 독일 ドイツ 德国 德國
France: 프랑스 フランス 法国 法國
America: 미국 アメリカ 美国 美國
England UK: 영국 イギリス 英国 英國
"""


def _table() -> list[tuple[str, str]]:
    pairs = []
    for line in _ENTRIES.strip().splitlines():  # "english: forms", English in lower case but names
        english, _, forms = line.partition(":")
        english = re.sub(r"\s*\(.*\)", "", english).strip()
        pairs += [(form, english) for form in forms.split()]
    return sorted(pairs, key=lambda p: -len(p[0]))


TABLE = _table()


def gloss(text: str) -> list[str]:
    """English keywords for the CJK words and dates of `text`, in order of appearance."""
    found: list[tuple[int, str]] = []
    taken = [False] * len(text)
    for m in _DATE.finditer(text):
        month = int(m.group(1))
        if 1 <= month <= 12:
            day = f" {int(m.group(2))}" if m.group(2) else ""
            found.append((m.start(), MONTHS[month - 1] + day))
            taken[m.start() : m.end()] = [True] * (m.end() - m.start())
    for m in _YEAR.finditer(text):
        found.append((m.start(), m.group(1)))
    for form, english in TABLE:
        for m in re.finditer(re.escape(form), text):
            if not any(taken[m.start() : m.end()]):
                found.append((m.start(), english))
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
    out: list[str] = []
    for _, english in sorted(found):
        if english not in out:
            out.append(english)
    return out
